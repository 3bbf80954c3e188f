/**
 * Which outcomes count as reaching the gateway, and the dedupe topic's records written
 * and read back: round trip, and everything a reader must pass over.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  dedupeRecord,
  firstCompletion,
  readDedupeRecord,
} from '../../src/pipeline/dedupe-records.ts';
import type { SendOutcome } from '../../src/pipeline/send-outcome.ts';

const at = { partition: 2, offset: '41', completedAt: '2026-11-27T10:00:00.000Z' };

test('outcomes that reached the gateway, or may have, are first completions', () => {
  const sent: SendOutcome = {
    kind: 'item',
    item: { success: true, data: { msg_id: 'm1', parts: 1 } },
    attempts: 1,
  };
  assert.deepEqual(firstCompletion(sent, at), {
    ...at,
    atMs: Date.parse(at.completedAt),
    success: true,
    msgId: 'm1',
  });
  assert.equal(
    firstCompletion({ kind: 'accepted', requestId: 'r9', attempts: 1 }, at)?.requestId,
    'r9',
  );
  assert.equal(
    firstCompletion({ kind: 'reconciled', record: { msg_id: 'm2' }, attempts: 1 }, at)?.msgId,
    'm2',
  );
  const doubt = firstCompletion(
    { kind: 'transport', error: 'timed out', attempts: 3, delivery: 'in_doubt' },
    at,
  );
  assert.equal(doubt?.success, false);
  assert.equal(doubt?.delivery, 'in_doubt');
});

test('outcomes that never reached the gateway are not: a copy is sent as a command of its own', () => {
  const never: (SendOutcome | undefined)[] = [
    undefined,
    { kind: 'item', item: { success: false, error: 'Error in Alpha-name' }, attempts: 1 },
    { kind: 'rejected', error: 'bad envelope', attempts: 1 },
    { kind: 'transport', error: 'refused', attempts: 3, delivery: 'unsent' },
    { kind: 'abandoned', sent: true },
  ];
  for (const outcome of never) assert.equal(firstCompletion(outcome, at), undefined);
});

test('a record round-trips to the partition it was written for', () => {
  const first = firstCompletion({ kind: 'accepted', requestId: 'r9', attempts: 1 }, at);
  assert.ok(first);
  const record = dedupeRecord('ferry.dedupe', '1021', first);
  assert.equal(record.topic, 'ferry.dedupe');
  assert.equal(record.key, '2:1021', 'the commands partition and the id');
  assert.equal(record.partition, 2);
  const read = readDedupeRecord(
    Buffer.from(String(record.key)),
    Buffer.from(String(record.value)),
    2,
  );
  assert.deepEqual(read, { id: '1021', first });
});

test('a reader passes over tombstones, other partitions, other layouts and garbage', () => {
  const key = Buffer.from('2:7');
  const value = (fields: Record<string, unknown>) => Buffer.from(JSON.stringify(fields));
  const good = { v: 1, partition: 2, offset: '3', success: true, completed_at: at.completedAt };
  assert.ok(readDedupeRecord(key, value(good), 2));
  assert.equal(readDedupeRecord(key, null, 2), undefined, 'tombstone');
  assert.equal(readDedupeRecord(null, value(good), 2), undefined, 'no key');
  assert.equal(readDedupeRecord(key, value(good), 5), undefined, "another partition's");
  assert.equal(readDedupeRecord(key, value({ ...good, v: 2 }), 2), undefined, 'a later layout');
  assert.equal(readDedupeRecord(key, Buffer.from('{not json'), 2), undefined);
  assert.equal(readDedupeRecord(key, value({ ...good, completed_at: 'soon' }), 2), undefined);
  assert.equal(
    readDedupeRecord(Buffer.from('5:7'), value(good), 2),
    undefined,
    'a key of another commands partition (a shared dedupe partition; compaction keeps both)',
  );
  assert.equal(readDedupeRecord(Buffer.from('7'), value(good), 2), undefined, 'a bare id');
});
