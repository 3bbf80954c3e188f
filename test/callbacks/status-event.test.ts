import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  callbackFingerprint,
  canonicalJson,
  encodeStatusEvent,
  statusEventKey,
} from '../../src/callbacks/status-event.ts';

test('the event key is id, else msg_id, else request_id', () => {
  assert.deepEqual(statusEventKey({ success: true, id: '7', msg_id: '9' }), {
    field: 'id',
    key: '7',
  });
  assert.deepEqual(statusEventKey({ success: true, id: '', msg_id: '9' }), {
    field: 'msg_id',
    key: '9',
  });
  assert.deepEqual(statusEventKey({ success: false, request_id: 'r-1' }), {
    field: 'request_id',
    key: 'r-1',
  });
  assert.deepEqual(statusEventKey({ success: true, id: 42 }), { field: 'id', key: '42' });
  assert.equal(statusEventKey({ success: true }), undefined);
  assert.equal(statusEventKey({ success: true, id: null }), undefined);
});

test('the fingerprint is the whole receipt, whatever the order of its fields', () => {
  const base = {
    success: true,
    id: '7',
    msg_id: '9',
    status: 'DELIVERED',
    updated: '2024-01-01T00:00:00.000Z',
    request_id: 'r-1',
  };
  const reordered = {
    request_id: 'r-1',
    updated: '2024-01-01T00:00:00.000Z',
    status: 'DELIVERED',
    msg_id: '9',
    id: '7',
    success: true,
  };
  assert.equal(callbackFingerprint(base), callbackFingerprint(reordered));
  assert.equal(
    callbackFingerprint(base),
    callbackFingerprint({ ...base, received_at: 'ferry time is not part of it' }),
  );
  // Two messages of one async request, or anything else that differs, are two receipts.
  for (const other of [
    { ...base, id: '8', msg_id: '10' },
    { ...base, status: 'READ' },
    { ...base, updated: '2024-01-01T00:00:01.000Z' },
    { ...base, extra: 1 },
    { ...base, replies: [{ datetime: '2024-01-01T00:00:02.000Z', message: 'Yes' }] },
    { ...base, success: false },
  ]) {
    assert.notEqual(callbackFingerprint(base), callbackFingerprint(other), JSON.stringify(other));
  }
  assert.notEqual(
    callbackFingerprint({ ...base, replies: [{ message: 'a' }, { message: 'b' }] }),
    callbackFingerprint({ ...base, replies: [{ message: 'b' }, { message: 'a' }] }),
    'the order of replies counts; only object keys are sorted',
  );
});

test('canonical JSON sorts keys at every depth and leaves arrays in order', () => {
  assert.equal(
    canonicalJson({ b: [2, { d: 1, c: null }], a: 'x' }),
    '{"a":"x","b":[2,{"c":null,"d":1}]}',
  );
});

test('the event value keeps every field as received and adds received_at', () => {
  const callback = {
    success: true,
    id: '7',
    replies: [{ datetime: 'x', media: { url: 'https://m/1.jpg', filename: 'a', filesize: 3 } }],
    unknown_field: { nested: [1, 2] },
    received_at: 'spoofed',
  };
  const value = JSON.parse(encodeStatusEvent(callback, new Date(Date.UTC(2024, 0, 2, 3, 4, 5))));
  assert.deepEqual(value, { ...callback, received_at: '2024-01-02T03:04:05.000Z' });
});
