import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  encodeEnvelope,
  operationTypes,
  validateEnvelopeShape,
  validateOperation,
} from '../../src/contract/index.ts';
import { FerryError } from '../../src/errors.ts';
import { validOperations } from '../fixtures/operations.ts';

test('an envelope round-trips through JSON.parse with auth and operations in order', () => {
  const operations = operationTypes.map((type) => validOperations[type]);
  const body = encodeEnvelope(
    'key-1',
    operations.map((operation) => JSON.stringify(operation)),
  );
  const parsed: unknown = JSON.parse(body);
  assert.deepEqual(parsed, { auth: 'key-1', data: operations });
  assert.equal(validateEnvelopeShape(parsed).ok, true);
});

test('every operation of a decoded envelope still passes the validator', () => {
  const body = encodeEnvelope('k', [
    JSON.stringify(validOperations.sms),
    JSON.stringify(validOperations.pipeline),
  ]);
  const parsed = JSON.parse(body) as { data: unknown[] };
  for (const item of parsed.data) assert.equal(validateOperation(item).ok, true);
});

test('operation JSON is embedded verbatim, extra properties and spacing included', () => {
  const operationJson = '{ "type": "sms", "id": 1, "x-trace": "a\\"b" }';
  const body = encodeEnvelope('k', [operationJson]);
  assert.equal(body, `{"auth":"k","data":[${operationJson}]}`);
  assert.deepEqual(JSON.parse(body), {
    auth: 'k',
    data: [{ type: 'sms', id: 1, 'x-trace': 'a"b' }],
  });
});

test('an API key with quotes, backslashes and non-ASCII characters is escaped', () => {
  const auth = 'k"e\\y\u2028ключ';
  const body = encodeEnvelope(auth, ['{"type":"balance"}']);
  assert.equal((JSON.parse(body) as { auth: string }).auth, auth);
});

test('an envelope without operations is refused as a caller bug', () => {
  assert.throws(
    () => encodeEnvelope('k', []),
    (error: unknown) =>
      error instanceof FerryError && error.code === 'internal' && !error.retryable,
  );
});
