import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { type Batch, Batcher } from '../../src/pipeline/batcher.ts';

function collect(maxOps: number, lingerMs: number) {
  const batches: Batch<number>[] = [];
  const batcher = new Batcher<number>({ maxOps, lingerMs, onBatch: (b) => batches.push(b) });
  return { batcher, batches };
}

test('batcher flushes as soon as a batch is full', () => {
  const { batcher, batches } = collect(3, 10_000);
  for (const n of [1, 2, 3, 4]) batcher.add('sync', n);
  assert.deepEqual(batches, [{ transport: 'sync', items: [1, 2, 3] }]);
  assert.equal(batcher.pending, 1);
  batcher.flushAll();
});

test('batcher flushes a partial batch when linger passes', async () => {
  const { batcher, batches } = collect(100, 30);
  batcher.add('sync', 1);
  batcher.add('sync', 2);
  assert.equal(batches.length, 0);
  await sleep(80);
  assert.deepEqual(batches, [{ transport: 'sync', items: [1, 2] }]);
});

test('batcher keeps transports apart', () => {
  const { batcher, batches } = collect(2, 10_000);
  batcher.add('sync', 1);
  batcher.add('async', 2);
  batcher.add('sync', 3);
  batcher.add('async', 4);
  assert.deepEqual(batches, [
    { transport: 'sync', items: [1, 3] },
    { transport: 'async', items: [2, 4] },
  ]);
});

test('flushAll sends every partial batch at once and leaves nothing pending', () => {
  const { batcher, batches } = collect(10, 10_000);
  batcher.add('sync', 1);
  batcher.add('async', 2);
  batcher.flushAll();
  assert.equal(batches.length, 2);
  assert.equal(batcher.pending, 0);
});

test('inputDrained cuts partial batches at the end of the turn, not at linger', async () => {
  const { batcher, batches } = collect(100, 10_000);
  batcher.add('sync', 1);
  batcher.inputDrained();
  // Another partition of the same fetch, handled in the same turn, shares the envelope.
  batcher.add('sync', 2);
  batcher.add('async', 3);
  batcher.inputDrained();
  assert.equal(batches.length, 0);
  await new Promise((resolve) => setImmediate(resolve));
  assert.deepEqual(batches, [
    { transport: 'sync', items: [1, 2] },
    { transport: 'async', items: [3] },
  ]);
  assert.equal(batcher.pending, 0);
});

test('inputDrained with nothing pending schedules nothing; a later add waits for linger', async () => {
  const { batcher, batches } = collect(100, 40);
  batcher.inputDrained();
  await new Promise((resolve) => setImmediate(resolve));
  batcher.add('sync', 1);
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(batches.length, 0);
  await sleep(90);
  assert.deepEqual(batches, [{ transport: 'sync', items: [1] }]);
});
