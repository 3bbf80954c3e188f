import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  callbackFingerprint,
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

test('fingerprints differ by key field, status and updated', () => {
  const id7 = { field: 'id', key: '7' } as const;
  const msg7 = { field: 'msg_id', key: '7' } as const;
  const base = { success: true, status: 'DELIVERED', updated: '2024-01-01T00:00:00+00:00' };
  assert.equal(callbackFingerprint(id7, base), callbackFingerprint(id7, { ...base, extra: 1 }));
  assert.notEqual(callbackFingerprint(id7, base), callbackFingerprint(msg7, base));
  assert.notEqual(
    callbackFingerprint(id7, base),
    callbackFingerprint(id7, { ...base, status: 'READ' }),
  );
  assert.notEqual(
    callbackFingerprint(id7, base),
    callbackFingerprint(id7, { ...base, updated: '2024-01-01T00:00:01+00:00' }),
  );
  assert.notEqual(
    callbackFingerprint(id7, { success: true }),
    callbackFingerprint(id7, { success: true, status: 'null' }),
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
