import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type TestContext, test } from 'node:test';
import { readConfig, redactedConfig, secretValues } from '../../src/config/config.ts';
import { readKafkaSecurity } from '../../src/config/kafka-security.ts';
import { ConfigError } from '../../src/errors.ts';

const minimal = {
  FERRY_API_KEY: 'k-123',
  FERRY_SYNC_BASE_URL: 'http://127.0.0.1:8090/',
  FERRY_ADMIN_TOKEN: 'admin-secret',
};

async function folder(t: TestContext): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'ferry-config-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

const scram = {
  ...minimal,
  FERRY_KAFKA_SECURITY_PROTOCOL: 'SASL_SSL',
  FERRY_KAFKA_SASL_MECHANISM: 'SCRAM-SHA-512',
  FERRY_KAFKA_SASL_USERNAME: 'ferry',
};

test('a secret comes from <NAME>_FILE without its trailing newline, and is redacted like the variable', async (t) => {
  const dir = await folder(t);
  await writeFile(join(dir, 'password'), 's3cret pass\n');
  await writeFile(join(dir, 'api-key'), 'key-from-file');
  const config = readConfig({
    ...scram,
    FERRY_API_KEY: '',
    FERRY_API_KEY_FILE: join(dir, 'api-key'),
    FERRY_KAFKA_SASL_PASSWORD_FILE: join(dir, 'password'),
  });
  assert.equal(config.FERRY_KAFKA_SASL_PASSWORD, 's3cret pass');
  assert.equal(config.FERRY_API_KEY, 'key-from-file');
  const dump = JSON.stringify(redactedConfig(config));
  assert.ok(!dump.includes('s3cret') && !dump.includes('key-from-file'), dump);
  assert.match(dump, /"FERRY_KAFKA_SASL_PASSWORD":"\[redacted\]"/);
  assert.ok(secretValues(config).includes('s3cret pass'), 'the logger scrubs the password');
});

test('a secret file that is missing, empty, or set together with the variable is refused', async (t) => {
  const dir = await folder(t);
  await writeFile(join(dir, 'empty'), '\n');
  const cases: [Record<string, string>, RegExp][] = [
    [
      { ...scram, FERRY_KAFKA_SASL_PASSWORD_FILE: join(dir, 'nope') },
      /FERRY_KAFKA_SASL_PASSWORD_FILE: cannot read .* \(ENOENT\)/,
    ],
    [{ ...scram, FERRY_KAFKA_SASL_PASSWORD_FILE: join(dir, 'empty') }, /is empty/],
    [
      {
        ...scram,
        FERRY_KAFKA_SASL_PASSWORD: 'x',
        FERRY_KAFKA_SASL_PASSWORD_FILE: join(dir, 'empty'),
      },
      /FERRY_KAFKA_SASL_PASSWORD_FILE: is set together with FERRY_KAFKA_SASL_PASSWORD/,
    ],
  ];
  for (const [env, message] of cases) {
    assert.throws(
      () => readConfig(env),
      (error: unknown) => {
        assert.ok(error instanceof ConfigError);
        assert.match(error.message, message);
        return true;
      },
    );
  }
});

test('security combinations that cannot connect are refused, naming the variable', () => {
  const cases: [Record<string, string>, string][] = [
    [
      { ...minimal, FERRY_KAFKA_SECURITY_PROTOCOL: 'SASL_SSL' },
      'FERRY_KAFKA_SASL_MECHANISM: is required with SASL_SSL',
    ],
    [
      { ...scram },
      'FERRY_KAFKA_SASL_PASSWORD: is required with SCRAM-SHA-512 (or FERRY_KAFKA_SASL_PASSWORD_FILE)',
    ],
    [
      { ...minimal, FERRY_KAFKA_SASL_MECHANISM: 'PLAIN' },
      'FERRY_KAFKA_SECURITY_PROTOCOL: is PLAINTEXT, which does not use SASL; use SASL_SSL (or SASL_PLAINTEXT) with FERRY_KAFKA_SASL_MECHANISM',
    ],
    [
      { ...minimal, FERRY_KAFKA_TLS_CA_FILE: '/ca.pem' },
      'FERRY_KAFKA_SECURITY_PROTOCOL: is PLAINTEXT, which does not use the FERRY_KAFKA_TLS_* files given; use SSL or SASL_SSL',
    ],
    [
      { ...minimal, FERRY_KAFKA_SECURITY_PROTOCOL: 'SSL', FERRY_KAFKA_TLS_CERT_FILE: '/c.pem' },
      'FERRY_KAFKA_TLS_KEY_FILE: a client certificate needs both a certificate and a key file',
    ],
    [
      { ...scram, FERRY_KAFKA_SASL_MECHANISM: 'OAUTHBEARER' },
      'FERRY_KAFKA_SASL_OAUTHBEARER_TOKEN_FILE: OAUTHBEARER needs exactly one token source: FERRY_KAFKA_SASL_OAUTHBEARER_TOKEN_FILE or FERRY_KAFKA_SASL_OAUTHBEARER_TOKEN_COMMAND',
    ],
    [
      { ...minimal, FERRY_KAFKA_SECURITY_PROTOCOL: 'TLS' },
      'FERRY_KAFKA_SECURITY_PROTOCOL: must be one of PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL, got "TLS"',
    ],
    [
      { ...minimal, FERRY_TOPIC_MIN_INSYNC_REPLICAS: '2' },
      'FERRY_TOPIC_MIN_INSYNC_REPLICAS: must not exceed FERRY_TOPIC_REPLICATION_FACTOR (1), got 2',
    ],
  ];
  for (const [env, message] of cases) {
    assert.throws(() => readConfig(env), { name: 'ConfigError', message });
  }
});

test('the TLS files are read once into PEM text; a file without a PEM block is refused', async (t) => {
  const dir = await folder(t);
  const pem = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n';
  await writeFile(join(dir, 'ca.pem'), pem);
  await writeFile(join(dir, 'not.pem'), 'hello');
  const config = readConfig({
    ...scram,
    FERRY_KAFKA_SASL_PASSWORD: 'p',
    FERRY_KAFKA_TLS_CA_FILE: join(dir, 'ca.pem'),
  });
  const security = readKafkaSecurity(config);
  assert.deepEqual(security, {
    protocol: 'SASL_SSL',
    tls: { checkHostname: true, ca: pem },
    sasl: { mechanism: 'SCRAM-SHA-512', username: 'ferry', password: 'p' },
  });
  assert.throws(
    () => readKafkaSecurity({ ...config, FERRY_KAFKA_TLS_CA_FILE: join(dir, 'not.pem') }),
    /FERRY_KAFKA_TLS_CA_FILE: ".*not\.pem" holds no PEM block/,
  );
  assert.deepEqual(readKafkaSecurity(readConfig(minimal)), { protocol: 'PLAINTEXT' });
});
