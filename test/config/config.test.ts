import assert from 'node:assert/strict';
import { test } from 'node:test';
import { readConfig, redactedConfig, secretValues } from '../../src/config/config.ts';
import { ConfigError } from '../../src/errors.ts';

const minimal = {
  FERRY_API_KEY: 'k-123',
  FERRY_SYNC_BASE_URL: 'http://127.0.0.1:8090/',
  FERRY_ADMIN_TOKEN: 'admin-secret',
};

test('defaults fill every variable that is not set', () => {
  const config = readConfig(minimal);
  assert.deepEqual(config.FERRY_KAFKA_BROKERS, ['127.0.0.1:9092']);
  assert.equal(config.FERRY_TOPIC_COMMANDS, 'ferry.commands');
  assert.equal(config.FERRY_TRANSPORT, 'sync');
  assert.equal(config.FERRY_HTTP_PORT, 8080);
  assert.equal(config.FERRY_OPS_PORT, 8081);
  assert.equal(config.FERRY_OPS_HOST, '0.0.0.0');
  assert.equal(config.FERRY_SYNC_BASE_URL, 'http://127.0.0.1:8090', 'trailing slash removed');
  assert.equal(config.FERRY_ASYNC_BASE_URL, undefined);
  assert.equal(config.FERRY_KAFKA_COMPRESSION, 'none');
  assert.equal(
    readConfig({ ...minimal, FERRY_KAFKA_COMPRESSION: 'zstd' }).FERRY_KAFKA_COMPRESSION,
    'zstd',
  );
});

const failures: [Record<string, string>, string][] = [
  [{}, 'FERRY_API_KEY: is required'],
  [
    { ...minimal, FERRY_SYNC_BASE_URL: 'ftp://x' },
    'FERRY_SYNC_BASE_URL: must be an http or https URL, got "ftp://x"',
  ],
  [{ ...minimal, FERRY_HTTP_PORT: '80a' }, 'FERRY_HTTP_PORT: must be an integer, got "80a"'],
  [
    { ...minimal, FERRY_BATCH_MAX_OPS: '0' },
    'FERRY_BATCH_MAX_OPS: must be between 1 and 1000, got 0',
  ],
  [
    { ...minimal, FERRY_TRANSPORT: 'pigeon' },
    'FERRY_TRANSPORT: must be one of sync, async, got "pigeon"',
  ],
  [
    { ...minimal, FERRY_KAFKA_COMPRESSION: 'brotli' },
    'FERRY_KAFKA_COMPRESSION: must be one of none, gzip, snappy, lz4, zstd, got "brotli"',
  ],
  [
    { ...minimal, FERRY_TRANSPORT: 'async' },
    'FERRY_ASYNC_BASE_URL: is required when FERRY_TRANSPORT is async',
  ],
  [
    { ...minimal, FERRY_CALLBACK_PUBLIC_URL: 'https://ferry.example.com' },
    'FERRY_CALLBACK_TOKEN: is required when callbacks are on',
  ],
  [
    { ...minimal, FERRY_KAFKA_SESSION_TIMEOUT_MS: '6000', FERRY_REQUEST_TIMEOUT_MS: '20000' },
    'FERRY_REQUEST_TIMEOUT_MS: must be below FERRY_KAFKA_SESSION_TIMEOUT_MS (6000), got 20000',
  ],
  [
    { ...minimal, FERRY_REQUEST_TIMEOUT_MS: '30000' },
    'FERRY_REQUEST_TIMEOUT_MS: must be below FERRY_KAFKA_SESSION_TIMEOUT_MS (30000), got 30000',
  ],
  [
    { ...minimal, FERRY_CALLBACK_PUBLIC_URL: 'https://ferry.example.com/callbacks' },
    'FERRY_CALLBACK_PUBLIC_URL: is the service\'s base URL: ferry adds /callbacks/{token} itself, so it must not end with /callbacks (the gateway would post to /callbacks/callbacks/{token}), got "https://ferry.example.com/callbacks"',
  ],
  [
    { ...minimal, FERRY_CALLBACK_PUBLIC_URL: 'https://example.com/ferry?x=1' },
    'FERRY_CALLBACK_PUBLIC_URL: must not carry a query or a fragment, got "https://example.com/ferry?x=1"',
  ],
  [
    { ...minimal, FERRY_OPS_PORT: '8080' },
    'FERRY_OPS_PORT: must differ from FERRY_HTTP_PORT (8080): metrics and health have a port of their own',
  ],
  [
    { ...minimal, FERRY_HTTP_PORT: '9000', FERRY_OPS_PORT: '50051' },
    'FERRY_OPS_PORT: must differ from FERRY_GRPC_PORT (50051): metrics and health have a port of their own',
  ],
  [
    { ...minimal, FERRY_HTTP_MAX_CONNECTIONS_PER_CLIENT: '-1' },
    'FERRY_HTTP_MAX_CONNECTIONS_PER_CLIENT: must be between 0 and 1000000, got -1',
  ],
  [
    { FERRY_API_KEY: 'k', FERRY_SYNC_BASE_URL: 'http://x' },
    'FERRY_ADMIN_TOKEN: is required unless FERRY_ADMIN_LOOPBACK_ONLY=true binds the admin API to loopback',
  ],
];

for (const [env, message] of failures) {
  test(`a wrong configuration names the variable: ${message}`, () => {
    assert.throws(
      () => readConfig(env),
      (error: unknown) => {
        assert.ok(error instanceof ConfigError);
        assert.equal(error.message, message);
        return true;
      },
    );
  });
}

test('secrets never appear in the logged configuration', () => {
  const config = readConfig({
    ...minimal,
    FERRY_CALLBACK_TOKEN: 'cb-secret',
    FERRY_CALLBACK_PUBLIC_URL: 'https://f.example.com',
  });
  const logged = JSON.stringify(redactedConfig(config));
  for (const secret of ['k-123', 'admin-secret', 'cb-secret']) assert.ok(!logged.includes(secret));
  assert.deepEqual(secretValues(config).sort(), ['admin-secret', 'cb-secret', 'k-123']);
});

test('the admin and HTTP surface limits have defaults and bounds', () => {
  const config = readConfig(minimal);
  assert.equal(config.FERRY_GRPC_MAX_RECEIVE_BYTES, 1024 * 1024);
  assert.equal(config.FERRY_GRPC_MAX_CONCURRENT_STREAMS, 100);
  assert.equal(config.FERRY_GRPC_MAX_HEALTH_WATCHES, 100);
  assert.equal(config.FERRY_HTTP_MAX_CONNECTIONS, 1024);
  assert.equal(config.FERRY_HTTP_MAX_CONNECTIONS_PER_CLIENT, 64);
  assert.equal(config.FERRY_HTTP_MAX_HEADER_BYTES, 16 * 1024);
  // 0 turns the per-client cap off; the ops port may be 0 (a free one) with any other.
  const unbounded = readConfig({
    ...minimal,
    FERRY_HTTP_MAX_CONNECTIONS_PER_CLIENT: '0',
    FERRY_HTTP_PORT: '0',
    FERRY_OPS_PORT: '0',
  });
  assert.equal(unbounded.FERRY_HTTP_MAX_CONNECTIONS_PER_CLIENT, 0);
  assert.equal(
    readConfig({ ...minimal, FERRY_GRPC_MAX_HEALTH_WATCHES: '3' }).FERRY_GRPC_MAX_HEALTH_WATCHES,
    3,
  );
  assert.throws(
    () => readConfig({ ...minimal, FERRY_HTTP_MAX_HEADER_BYTES: '100' }),
    /FERRY_HTTP_MAX_HEADER_BYTES: must be between 1024 and 1048576, got 100/,
  );
  assert.throws(
    () => readConfig({ ...minimal, FERRY_GRPC_MAX_CONCURRENT_STREAMS: '0' }),
    /FERRY_GRPC_MAX_CONCURRENT_STREAMS: must be between 1 and 10000, got 0/,
  );
});

test('the unparsed-callbacks topic and the propagated headers have defaults and can be set', () => {
  const config = readConfig(minimal);
  assert.equal(config.FERRY_TOPIC_UNPARSED_CALLBACKS, 'ferry.callbacks.unparsed');
  assert.deepEqual(config.FERRY_PROPAGATE_HEADERS, ['traceparent', 'tracestate', 'correlation-id']);
  assert.deepEqual(
    readConfig({ ...minimal, FERRY_PROPAGATE_HEADERS: 'TraceParent, X-Request-Id,traceparent' })
      .FERRY_PROPAGATE_HEADERS,
    ['traceparent', 'x-request-id'],
    'lower-cased, repeats dropped',
  );
  assert.deepEqual(
    readConfig({ ...minimal, FERRY_PROPAGATE_HEADERS: 'none' }).FERRY_PROPAGATE_HEADERS,
    [],
  );
  assert.throws(
    () => readConfig({ ...minimal, FERRY_PROPAGATE_HEADERS: 'traceparent,bad name' }),
    (error: unknown) =>
      error instanceof ConfigError && /FERRY_PROPAGATE_HEADERS: .*"bad name"/.test(error.message),
  );
});

test('FERRY_EXPIRE_AFTER_MS takes message types (call/otp too) and *, and refuses the rest', () => {
  const defaults = readConfig({
    ...minimal,
    FERRY_EXPIRE_AFTER_MS: 'telegram=300000, call/otp=300000,*=3600000',
  }).FERRY_EXPIRE_AFTER_MS;
  assert.deepEqual(Object.fromEntries(defaults), {
    telegram: 300_000,
    'call/otp': 300_000,
    '*': 3_600_000,
  });
  assert.equal(
    readConfig({ ...minimal, FERRY_EXPIRE_AFTER_MS: 'none' }).FERRY_EXPIRE_AFTER_MS.size,
    0,
  );
  for (const wrong of ['balance=1000', 'sms=10', 'sms', 'sms=1000,sms=2000', 'whatsapp=60000']) {
    assert.throws(
      () => readConfig({ ...minimal, FERRY_EXPIRE_AFTER_MS: wrong }),
      /FERRY_EXPIRE_AFTER_MS/,
      wrong,
    );
  }
  assert.throws(
    () => readConfig({ ...minimal, FERRY_TOPIC_COMMANDS_URGENT: 'ferry.commands' }),
    /FERRY_TOPIC_COMMANDS_URGENT/,
  );
});

test('final status tracking is off by default; its bounds must leave room for a lookup', () => {
  const defaults = readConfig(minimal);
  assert.equal(defaults.FERRY_STATUS_TRACKING, false);
  assert.equal(defaults.FERRY_TOPIC_TRACKING, 'ferry.tracking');
  assert.equal(defaults.FERRY_TOPIC_STATUS_FINAL, 'ferry.status.final');
  assert.equal(defaults.FERRY_STATUS_POLL_AFTER_MS, 600_000);
  assert.equal(defaults.FERRY_STATUS_GIVE_UP_AFTER_MS, 172_800_000);
  assert.ok(defaults.FERRY_STATUS_NOT_FINAL.includes('SENT'));
  const on = readConfig({
    ...minimal,
    FERRY_STATUS_TRACKING: 'true',
    FERRY_STATUS_NOT_FINAL: 'SENT, QUEUED',
  });
  assert.equal(on.FERRY_STATUS_TRACKING, true);
  assert.deepEqual(on.FERRY_STATUS_NOT_FINAL, ['SENT', 'QUEUED']);
  assert.throws(
    () =>
      readConfig({
        ...minimal,
        FERRY_STATUS_POLL_AFTER_MS: '600000',
        FERRY_STATUS_GIVE_UP_AFTER_MS: '600000',
      }),
    /FERRY_STATUS_GIVE_UP_AFTER_MS/,
  );
});
