import assert from 'node:assert/strict';
import { test } from 'node:test';
import { compilerCpuSeconds } from '../../bench/broker-warmup.ts';
import { busiestBetween, cpuSnapshot, formatBusiest } from '../../bench/machine-cpu.ts';

test('busiestBetween names the processes that used the most CPU between two snapshots', () => {
  const before = new Map([
    [10, { name: 'java', seconds: 100 }],
    [20, { name: 'node', seconds: 5 }],
    [30, { name: 'idle', seconds: 7 }],
  ]);
  const after = new Map([
    [10, { name: 'java', seconds: 112.5 }],
    [20, { name: 'node', seconds: 8 }],
    [30, { name: 'idle', seconds: 7 }],
    // Started between the two: all of its time counts.
    [40, { name: 'ferry', seconds: 4 }],
  ]);
  const busiest = busiestBetween(before, after, 2);
  assert.deepEqual(
    busiest.map((p) => [p.pid, p.seconds]),
    [
      [10, 12.5],
      [40, 4],
    ],
  );
  assert.equal(formatBusiest(busiest), 'java[10] 12.50 s, ferry[40] 4.00 s');
});

test('a snapshot of this machine includes this process, with its CPU time so far', () => {
  const spin = Date.now() + 50;
  while (Date.now() < spin) {
    // Uses some CPU so that the figure is above zero.
  }
  const own = cpuSnapshot().get(process.pid);
  assert.ok(own, 'this process is in the snapshot');
  assert.ok(own.seconds > 0);
});

test("compilerCpuSeconds counts only a JVM's compiler threads: none in Node, nothing for a gone process", () => {
  assert.equal(compilerCpuSeconds(process.pid), 0);
  assert.ok(Number.isNaN(compilerCpuSeconds(2 ** 22 + 12_345)));
});
