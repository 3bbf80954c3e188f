import assert from 'node:assert/strict';
import { test } from 'node:test';
import { collectDefaultMetrics, Registry } from 'prom-client';
import {
  formatRuntime,
  NO_RUNTIME_READING,
  parseRuntime,
  runtimeSince,
} from '../../bench/runtime-metrics.ts';

const reading = (minor: [number, number], major: [number, number], lagP99: number) => `
# HELP nodejs_gc_duration_seconds Garbage collection duration by kind.
# TYPE nodejs_gc_duration_seconds histogram
nodejs_gc_duration_seconds_bucket{le="0.001",kind="minor"} 1
nodejs_gc_duration_seconds_sum{kind="minor"} ${minor[0]}
nodejs_gc_duration_seconds_count{kind="minor"} ${minor[1]}
nodejs_gc_duration_seconds_sum{kind="major"} ${major[0]}
nodejs_gc_duration_seconds_count{kind="major"} ${major[1]}
nodejs_eventloop_lag_p99_seconds ${lagP99}
nodejs_eventloop_lag_max_seconds 0.25
`;

test('garbage collection counts only what happened between the two readings', () => {
  const before = parseRuntime(reading([0.5, 100], [0.1, 2], 0.011));
  const after = parseRuntime(reading([0.8, 160], [0.25, 5], 0.042));
  const figures = runtimeSince(before, after);
  assert.equal(Math.round(figures.gcMs), 450);
  assert.equal(figures.gcPauses, 63);
  assert.equal(Math.round(figures.majorGcMs), 150);
  assert.equal(figures.majorGcPauses, 3);
  assert.equal(figures.lagP99Ms, 42, 'the delay is the reading after: each reading resets it');
  assert.equal(figures.lagMaxMs, 250);
  assert.match(formatRuntime(figures), /GC 450 ms in 63 pauses \(major 3: 150 ms\)/);
});

test('without a reading before, the run counts from the process start', () => {
  const figures = runtimeSince(NO_RUNTIME_READING, parseRuntime(reading([0.5, 10], [0, 0], 0)));
  assert.equal(figures.gcPauses, 10);
  assert.equal(figures.majorGcPauses, 0);
});

test('reads what prom-client itself exposes', async () => {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  // Garbage of some size, so a collection is likely to have run before the reading.
  let kept = 0;
  for (let i = 0; i < 500_000; i += 1) kept += JSON.stringify({ i, pad: 'x'.repeat(64) }).length;
  assert.ok(kept > 0);
  await new Promise((resolve) => setTimeout(resolve, 50));
  const parsed = parseRuntime(await registry.metrics());
  assert.ok(Number.isFinite(parsed.lagP99Seconds), 'the event-loop delay gauge is found');
  assert.ok(Number.isFinite(parsed.lagMaxSeconds));
  for (const kind of parsed.gcCount.keys()) {
    assert.ok(['major', 'minor', 'incremental', 'weakcb'].includes(kind), `kind ${kind}`);
  }
  assert.ok(parsed.gcCount.size > 0, 'at least one kind of collection was counted');
});
