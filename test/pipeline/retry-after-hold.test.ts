import assert from 'node:assert/strict';
import { test } from 'node:test';
import { RetryAfterHold } from '../../src/pipeline/retry-after-hold.ts';

function clocked(maxMs: number) {
  let now = 1_000;
  const hold = new RetryAfterHold(maxMs, () => now);
  return { hold, advance: (ms: number) => (now += ms) };
}

test('a hold lasts what was asked, and later answers only lengthen it', () => {
  const { hold, advance } = clocked(60_000);
  assert.equal(hold.remainingMs, 0);
  assert.equal(hold.hold(5_000), 5_000);
  advance(1_000);
  assert.equal(hold.hold(2_000), 4_000, 'a shorter answer keeps the longer hold');
  assert.equal(hold.hold(10_000), 10_000);
  advance(10_000);
  assert.equal(hold.remainingMs, 0);
});

test('no answer holds longer than the maximum; 0 turns holds off', () => {
  const { hold } = clocked(60_000);
  assert.equal(hold.hold(86_400_000), 60_000);
  assert.equal(hold.hold(-5), 60_000);
  const off = clocked(0).hold;
  assert.equal(off.hold(30_000), 0);
  assert.equal(off.remainingMs, 0);
});

test('wait ends when the hold does, including a lengthening meanwhile', async () => {
  const hold = new RetryAfterHold(60_000);
  const started = performance.now();
  hold.hold(150);
  setTimeout(() => hold.hold(200), 100);
  await hold.wait();
  const waited = performance.now() - started;
  assert.ok(waited >= 295, `waited ${waited} ms`);
  assert.ok(waited < 1_000, `waited ${waited} ms`);
});

test('wait rejects when its signal aborts', async () => {
  const hold = new RetryAfterHold(60_000);
  hold.hold(10_000);
  const controller = new AbortController();
  setTimeout(() => controller.abort(new Error('stopping')), 20);
  await assert.rejects(hold.wait(controller.signal), /stopping/);
});

test('a lengthened hold is told to the other thread; a mirrored one is applied without echo', () => {
  const { hold, advance } = clocked(60_000);
  const told: number[] = [];
  hold.onLengthened((remainingMs) => told.push(remainingMs));
  hold.hold(5_000);
  hold.hold(2_000);
  assert.deepEqual(told, [5_000], 'only an answer that lengthened the hold is told');
  advance(1_000);
  hold.mirror(8_000);
  assert.equal(hold.remainingMs, 8_000);
  assert.deepEqual(told, [5_000], 'a mirrored hold is not told back');
  hold.mirror(1_000);
  assert.equal(hold.remainingMs, 8_000, 'a shorter mirrored hold keeps the longer one');
  hold.mirror(86_400_000);
  assert.equal(hold.remainingMs, 60_000, 'a mirrored hold is bounded like an answer');
});
