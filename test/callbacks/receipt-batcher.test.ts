import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ReceiptBatcher } from '../../src/callbacks/receipt-batcher.ts';
import { FerryError } from '../../src/errors.ts';
import type { OutboundRecord } from '../../src/kafka/kafka-client.ts';
import { recordSize as recordBytes } from '../../src/kafka/kafka-client.ts';

/** A send whose every call waits until the test settles it. */
function gatedSend() {
  const calls: {
    records: readonly OutboundRecord[];
    resolve: () => void;
    reject: (e: Error) => void;
  }[] = [];
  const send = (records: readonly OutboundRecord[]) =>
    new Promise<void>((resolve, reject) => {
      calls.push({ records, resolve, reject });
    });
  return { calls, send };
}

function record(id: number, value = `{"id":${id}}`): OutboundRecord {
  return { topic: 't', key: String(id), value };
}

const keys = (records: readonly OutboundRecord[]) => records.map((r) => r.key);
const tick = () => new Promise((resolve) => setImmediate(resolve));

test('a record that arrives while nothing is in flight is written at the end of the turn, with those of the same turn', async () => {
  const { calls, send } = gatedSend();
  const batcher = new ReceiptBatcher({ send, maxRecords: 100, maxBytes: 1 << 20 });
  const first = batcher.add(record(1));
  assert.equal(calls.length, 0, 'not before the turn ends');
  await tick();
  assert.equal(calls.length, 1);
  assert.deepEqual(keys(calls[0]?.records ?? []), ['1']);
  assert.equal(batcher.writing, true);
  calls[0]?.resolve();
  await first;
  assert.equal(batcher.writing, false);
  assert.deepEqual(batcher.stats, { writes: 1, records: 1 });
  // A burst in one turn: one write.
  const burst = [2, 3, 4].map((id) => batcher.add(record(id)));
  await tick();
  assert.deepEqual(keys(calls[1]?.records ?? []), ['2', '3', '4']);
  calls[1]?.resolve();
  await Promise.all(burst);
});

test('records arriving during a write go together in the next one, each answered by its own write', async () => {
  const { calls, send } = gatedSend();
  const batcher = new ReceiptBatcher({ send, maxRecords: 100, maxBytes: 1 << 20 });
  const settled: string[] = [];
  const track = (p: Promise<void>, name: string) => p.then(() => settled.push(name));
  const first = track(batcher.add(record(1)), '1');
  await tick();
  const rest = [2, 3, 4].map((id) => track(batcher.add(record(id)), String(id)));
  assert.equal(calls.length, 1, 'one write in flight at a time');
  assert.equal(batcher.waiting, 3);
  calls[0]?.resolve();
  await first;
  await tick();
  assert.deepEqual(settled, ['1'], 'the waiting records are not answered by the first write');
  assert.equal(calls.length, 2);
  assert.deepEqual(keys(calls[1]?.records ?? []), ['2', '3', '4']);
  calls[1]?.resolve();
  await Promise.all(rest);
  assert.deepEqual(settled, ['1', '2', '3', '4']);
  assert.deepEqual(batcher.stats, { writes: 2, records: 4 });
});

test('a write carries at most maxRecords; the rest follow in order', async () => {
  const { calls, send } = gatedSend();
  const batcher = new ReceiptBatcher({ send, maxRecords: 2, maxBytes: 1 << 20 });
  const all = [1, 2, 3, 4, 5, 6].map((id) => batcher.add(record(id)));
  for (const expected of [
    ['1', '2'],
    ['3', '4'],
    ['5', '6'],
  ]) {
    await tick();
    const call = calls.at(-1);
    assert.deepEqual(keys(call?.records ?? []), expected);
    call?.resolve();
  }
  await Promise.all(all);
  assert.equal(calls.length, 3);
});

test('a write stays under maxBytes; a record larger than it goes alone', async () => {
  const { calls, send } = gatedSend();
  const small = record(2, 'x'.repeat(100));
  const size = recordBytes(small);
  const batcher = new ReceiptBatcher({ send, maxRecords: 100, maxBytes: size * 2 });
  const all = [
    batcher.add(record(1)),
    batcher.add(small),
    batcher.add(record(3, 'x'.repeat(100))),
    batcher.add(record(4, 'x'.repeat(100))),
    batcher.add(record(5, 'y'.repeat(size * 3))),
    batcher.add(record(6)),
  ];
  const seen: (string | Buffer | null)[][] = [];
  while (seen.flat().length < 6) {
    await tick();
    const call = calls[seen.length];
    assert.ok(call, 'a write follows');
    seen.push(keys(call.records));
    const bytes = call.records.reduce((sum, r) => sum + recordBytes(r), 0);
    assert.ok(call.records.length === 1 || bytes <= size * 2, `write ${seen.length} too large`);
    call.resolve();
  }
  await Promise.all(all);
  assert.deepEqual(seen, [['1', '2'], ['3', '4'], ['5'], ['6']]);
});

test('a failed write rejects exactly its records; later records are written by the next write', async () => {
  const { calls, send } = gatedSend();
  const batcher = new ReceiptBatcher({ send, maxRecords: 100, maxBytes: 1 << 20 });
  const first = batcher.add(record(1));
  await tick();
  const second = batcher.add(record(2));
  const third = batcher.add(record(3));
  calls[0]?.resolve();
  await first;
  await tick();
  assert.deepEqual(keys(calls[1]?.records ?? []), ['2', '3']);
  const fourth = batcher.add(record(4));
  calls[1]?.reject(new FerryError('kafka', 'broker down'));
  await assert.rejects(second, /broker down/);
  await assert.rejects(third, /broker down/);
  await tick();
  assert.deepEqual(keys(calls[2]?.records ?? []), ['4'], 'the failed records are not resent');
  calls[2]?.resolve();
  await fourth;
});

test('a send that throws synchronously rejects its records and the batcher goes on', async () => {
  let fail = true;
  const batcher = new ReceiptBatcher({
    send: () => {
      if (fail) throw new FerryError('kafka', 'thrown');
      return Promise.resolve();
    },
    maxRecords: 10,
    maxBytes: 1 << 20,
  });
  await assert.rejects(batcher.add(record(1)), /thrown/);
  fail = false;
  await batcher.add(record(2));
  assert.equal(batcher.writing, false);
});

test('bounds must be positive integers', () => {
  const send = () => Promise.resolve();
  assert.throws(() => new ReceiptBatcher({ send, maxRecords: 0, maxBytes: 1 }), /maxRecords/);
  assert.throws(() => new ReceiptBatcher({ send, maxRecords: 1, maxBytes: 1.5 }), /maxBytes/);
});
