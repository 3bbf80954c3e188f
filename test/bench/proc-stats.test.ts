/**
 * The bench's reading of a process from procfs: CPU, memory and the main thread's
 * wake-ups, read off this test's own process.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { readProcessUsage } from '../../bench/proc-stats.ts';

test('a process that sleeps on timers is counted waking up for each', async () => {
  const before = readProcessUsage(process.pid);
  assert.ok(before, 'procfs is readable');
  for (let i = 0; i < 20; i++) await sleep(25);
  const after = readProcessUsage(process.pid);
  assert.ok(after);
  const waits = after.mainThreadWaits - before.mainThreadWaits;
  // About one wait per timer. On a loaded machine a timer can be due before the loop
  // gets to wait for it (the process was preempted meanwhile): then it does not wait.
  assert.ok(waits >= 10, `${waits} waits for 20 sleeps`);
  assert.ok(after.peakRssBytes >= after.rssBytes && after.rssBytes > 0);
  assert.ok(after.cpuSeconds >= before.cpuSeconds);
});

test('a process that is gone reads as undefined', () => {
  assert.equal(readProcessUsage(2 ** 22 + 1), undefined);
});
