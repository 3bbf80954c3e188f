import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  decodeSendIntent,
  encodeSendIntent,
  isReconcilable,
} from '../../src/pipeline/send-intent.ts';

test('a send intent survives the round trip through offset metadata', () => {
  const intent = { untilOffset: '12345678901234', atMs: 1_700_000_000_000 };
  assert.deepEqual(decodeSendIntent(encodeSendIntent(intent)), intent);
  const owned = { ...intent, by: 'a1b2' };
  assert.deepEqual(decodeSendIntent(encodeSendIntent(owned)), owned);
});

test('an intent without a writer, as older versions wrote it, reads as a foreign one', () => {
  const decoded = decodeSendIntent('ferry-intent:v1:{"untilOffset":"7","atMs":1}');
  assert.deepEqual(decoded, { untilOffset: '7', atMs: 1 });
  assert.equal(decoded?.by, undefined);
});

test('metadata that is not a ferry intent is ignored', () => {
  for (const metadata of [
    null,
    undefined,
    '',
    'someone else',
    'ferry-intent:v1:{',
    'ferry-intent:v1:{"untilOffset":"x","atMs":1}',
  ]) {
    assert.equal(decodeSendIntent(metadata), undefined, String(metadata));
  }
});

test('only sends with a numeric id can be looked up before a resend', () => {
  assert.equal(isReconcilable('sms', 42), true);
  assert.equal(isReconcilable('pipeline', 42), true);
  assert.equal(isReconcilable('call/otp', 42), true);
  assert.equal(isReconcilable('pipeline', undefined), false);
  assert.equal(isReconcilable('hlr', 42), false);
  assert.equal(isReconcilable('template/create', undefined), false);
});
