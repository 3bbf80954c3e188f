/** The tracking topic's records: written and read back alike; anything else passed over. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  callbackRecord,
  finalizedRecord,
  matchKey,
  readTrackingRecord,
  sentRecord,
} from '../../src/tracking/tracking-records.ts';

const asRead = (record: { key: unknown; value: unknown }) =>
  readTrackingRecord(
    Buffer.from(String(record.key)),
    record.value === null ? null : Buffer.from(String(record.value)),
  );

test('a sent record reads back as written, in the partition of its command', () => {
  const message = {
    id: '42',
    msgId: 'abc',
    key: 'id:42',
    type: 'sms',
    sentAt: '2026-11-27T12:00:00.000Z',
    command: { topic: 'ferry.commands', partition: 3, offset: '17' },
    lookup: true,
  };
  const record = sentRecord('ferry.tracking', 3, message);
  assert.equal(record.partition, 3);
  assert.deepEqual(asRead(record), { kind: 'sent', message: { ...message, requestId: undefined } });
});

test('a callback record and the tombstones read back', () => {
  const record = callbackRecord('t', 1, { id: '7', key: 'id:7', event: { status: 'READ' } });
  const read = asRead(record);
  assert.equal(read?.kind, 'callback');
  assert.deepEqual(asRead(finalizedRecord('t', 1, 'sent', 'id:7')), {
    kind: 'finalized',
    key: 'id:7',
    of: 'sent',
  });
  assert.deepEqual(asRead(finalizedRecord('t', 1, 'callback', 'id:7')), {
    kind: 'finalized',
    key: 'id:7',
    of: 'callback',
  });
});

test('records ferry did not write are passed over', () => {
  assert.equal(readTrackingRecord(null, Buffer.from('{}')), undefined);
  assert.equal(readTrackingRecord(Buffer.from('other:1'), Buffer.from('{}')), undefined);
  assert.equal(readTrackingRecord(Buffer.from('sent:id:1'), Buffer.from('not json')), undefined);
  assert.equal(readTrackingRecord(Buffer.from('sent:id:1'), Buffer.from('{"type":1}')), undefined);
  assert.equal(readTrackingRecord(Buffer.from('callback:id:1'), Buffer.from('[]')), undefined);
});

test('the match key prefers the command id, then msg_id, then request_id', () => {
  assert.equal(matchKey({ id: '1', msgId: 'm', requestId: 'r' }), 'id:1');
  assert.equal(matchKey({ msgId: 'm', requestId: 'r' }), 'msg:m');
  assert.equal(matchKey({ requestId: 'r' }), 'req:r');
  assert.equal(matchKey({}), undefined);
});
