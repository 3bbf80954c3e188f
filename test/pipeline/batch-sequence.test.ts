import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { InboundRecord, RecordBatch } from '../../src/kafka/kafka-port.ts';
import { BatchSequence, inSequence } from '../../src/pipeline/batch-sequence.ts';

function batch(from: number, to: number, rewinds: string[] = []): RecordBatch {
  const records: InboundRecord[] = [];
  for (let offset = from; offset <= to; offset++) {
    records.push({
      topic: 'commands',
      partition: 0,
      offset: String(offset),
      key: null,
      value: null,
      headers: {},
      timestamp: '0',
    });
  }
  return {
    topic: 'commands',
    partition: 0,
    records,
    lag: 0,
    heartbeat: async () => 'ok' as const,
    isCurrent: () => true,
    rewind: (offset) => rewinds.push(offset ?? String(from)),
  };
}

test('check: the first batch after an assignment is taken; later ones must continue it', () => {
  const sequence = new BatchSequence();
  // Fetched from 10, the next fetch begins at 15.
  assert.deepEqual(sequence.check('10', '15'), { kind: 'in-order' });
  assert.deepEqual(sequence.check('15', '21'), { kind: 'in-order' });
  assert.deepEqual(sequence.check('25', '31'), { kind: 'gap', from: '21' });
  sequence.assigned();
  assert.deepEqual(sequence.check('3', '5'), { kind: 'in-order' });
});

test('check: a fetch that began on a transaction marker continues the partition', () => {
  const sequence = new BatchSequence();
  // Records 0-3, a marker at 4: the next fetch begins at 5 and its first record is 6.
  assert.deepEqual(sequence.check('0', '5'), { kind: 'in-order' });
  assert.deepEqual(sequence.check('5', '8'), { kind: 'in-order' });
});

test('check: a batch that begins before the next offset overlaps what was handed over', () => {
  const sequence = new BatchSequence();
  sequence.check('0', '10');
  assert.deepEqual(sequence.check('5', '13'), { kind: 'overlap', from: 10n });
  assert.deepEqual(sequence.check('13', '14'), { kind: 'in-order' });
});

test('rewound: the next batch must begin where the partition is read again from', () => {
  const sequence = new BatchSequence();
  sequence.check('0', '10');
  sequence.rewound('4');
  assert.deepEqual(sequence.check('4', '7'), { kind: 'in-order' });
});

test('a gap read again that begins at the same offset is empty (markers, compaction): taken', () => {
  const sequence = new BatchSequence();
  sequence.check('0', '10');
  assert.deepEqual(sequence.check('12', '16'), { kind: 'gap', from: '10' });
  sequence.rewound('10');
  assert.deepEqual(sequence.check('12', '16'), { kind: 'in-order' });
  assert.deepEqual(sequence.check('16', '17'), { kind: 'in-order' });
});

test('atTakeover: the first batch of an assignment fetched past the group offset is a gap', () => {
  const sequence = new BatchSequence();
  sequence.check('8', '10');
  assert.deepEqual(sequence.atTakeover(5n, '8'), { kind: 'gap', from: '5' });
  sequence.rewound('5');
  // The read from the group offset begins there: in order, and nothing is left to verify.
  assert.deepEqual(sequence.check('5', '10'), { kind: 'in-order' });
  assert.deepEqual(sequence.atTakeover(5n, '5'), { kind: 'in-order' });
});

test('atTakeover: a batch fetched at or below the group offset, or a later one, is in order', () => {
  const sequence = new BatchSequence();
  sequence.check('3', '6');
  assert.deepEqual(sequence.atTakeover(5n, '3'), { kind: 'in-order' });
  sequence.check('6', '9');
  // A takeover within the assignment (after an uncertain commit): checked against the batch before.
  assert.deepEqual(sequence.atTakeover(4n, '6'), { kind: 'in-order' });
});

test('a gap is confirmed empty only by the first batch of its re-read, and never after a rejoin', () => {
  const sequence = new BatchSequence();
  sequence.check('150', '160');
  assert.deepEqual(sequence.atTakeover(100n, '150'), { kind: 'gap', from: '100' });
  sequence.rewound('100');
  assert.deepEqual(sequence.check('100', '150'), { kind: 'in-order' });
  // The same late fetch from 150 again, in a later assignment with the group offset still 100.
  sequence.assigned();
  sequence.check('150', '160');
  assert.deepEqual(sequence.atTakeover(100n, '150'), { kind: 'gap', from: '100' });
  // Within an assignment: a later batch past the expected offset is a gap, not a confirmation.
  sequence.rewound('100');
  sequence.check('100', '120');
  assert.deepEqual(sequence.check('150', '160'), { kind: 'gap', from: '120' });
});

test('inSequence: a batch past a gap is dropped and its partition read again from the gap', () => {
  const sequence = new BatchSequence();
  const rewinds: string[] = [];
  const gaps: string[] = [];
  assert.ok(inSequence(batch(0, 4), sequence, (from) => gaps.push(from)));
  assert.equal(
    inSequence(batch(8, 9, rewinds), sequence, (from) => gaps.push(from)),
    undefined,
  );
  assert.deepEqual(gaps, ['5']);
  assert.deepEqual(rewinds, ['5']);
  const again = inSequence(batch(5, 9), sequence, (from) => gaps.push(from));
  assert.deepEqual(
    again?.records.map((r) => r.offset),
    ['5', '6', '7', '8', '9'],
  );
});

test('inSequence: records handed over already are left out; a rewind is noted', () => {
  const sequence = new BatchSequence();
  const rewinds: string[] = [];
  inSequence(batch(0, 4), sequence, () => undefined);
  const overlapping = inSequence(batch(2, 6, rewinds), sequence, () => undefined);
  assert.deepEqual(
    overlapping?.records.map((r) => r.offset),
    ['5', '6'],
  );
  assert.equal(
    inSequence(batch(3, 6), sequence, () => undefined),
    undefined,
  );
  overlapping?.rewind();
  // Read again from what it kept, not from what was handed over already.
  assert.deepEqual(rewinds, ['5']);
  assert.deepEqual(sequence.check('5', '7'), { kind: 'in-order' });
});
