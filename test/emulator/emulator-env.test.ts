import assert from 'node:assert/strict';
import { test } from 'node:test';
import { emulatorOptionsFromEnv } from '../../src/emulator/emulator-env.ts';
import { ConfigError } from '../../src/errors.ts';

test('the environment gives port, senders, notification URL and knobs', () => {
  const options = emulatorOptionsFromEnv({
    EMULATOR_API_KEY: 'k',
    EMULATOR_PORT: '9000',
    EMULATOR_SENDERS: 'ferry, Acme ,,Shop',
    EMULATOR_NOTIFICATION_URL: 'http://127.0.0.1:8080/callbacks/t',
    EMULATOR_LATENCY_MS: '15',
    EMULATOR_HTTP500_RATE: '0.05',
    EMULATOR_SEED: '42',
  });
  assert.equal(options.apiKey, 'k');
  assert.equal(options.port, 9000);
  assert.deepEqual(options.senders, ['ferry', 'Acme', 'Shop']);
  assert.equal(options.notificationUrl, 'http://127.0.0.1:8080/callbacks/t');
  assert.deepEqual(options.knobs, { latencyMs: 15, http500Rate: 0.05 });
  assert.equal(options.seed, 42);
});

test('the port defaults to 8090 and the host to loopback', () => {
  const options = emulatorOptionsFromEnv({ EMULATOR_API_KEY: 'k' });
  assert.equal(options.port, 8090);
  assert.equal(options.host, '127.0.0.1');
});

const refused: ReadonlyArray<{ env: Record<string, string>; variable: string }> = [
  { env: {}, variable: 'EMULATOR_API_KEY' },
  { env: { EMULATOR_API_KEY: '  ' }, variable: 'EMULATOR_API_KEY' },
  { env: { EMULATOR_API_KEY: 'k', EMULATOR_PORT: 'http' }, variable: 'EMULATOR_PORT' },
  { env: { EMULATOR_API_KEY: 'k', EMULATOR_PORT: '70000' }, variable: 'EMULATOR_PORT' },
  {
    env: { EMULATOR_API_KEY: 'k', EMULATOR_NOTIFICATION_URL: 'ftp://x' },
    variable: 'EMULATOR_NOTIFICATION_URL',
  },
  { env: { EMULATOR_API_KEY: 'k', EMULATOR_TIMEOUT_RATE: '2' }, variable: 'EMULATOR_TIMEOUT_RATE' },
  { env: { EMULATOR_API_KEY: 'k', EMULATOR_LATENCY_MS: '-1' }, variable: 'EMULATOR_LATENCY_MS' },
];

for (const { env, variable } of refused) {
  test(`a bad ${variable} is a config error naming it (${JSON.stringify(env)})`, () => {
    assert.throws(
      () => emulatorOptionsFromEnv(env),
      (error: unknown) =>
        error instanceof ConfigError &&
        error.variable === variable &&
        error.message.startsWith(variable),
    );
  });
}
