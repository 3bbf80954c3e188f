import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import { laneMetrics } from '../../src/observability/lane-metrics.ts';
import { createMetrics } from '../../src/observability/metrics.ts';
import { mergeMetrics, metricsText } from '../../src/observability/metrics-merge.ts';
import { findTool } from '../deploy/external-tools.ts';

function registryWith(sent: number, inFlight: number, lane?: string) {
  const registry = new Registry();
  const counter = new Counter({
    name: 'x_sent_total',
    help: 'sent',
    labelNames: ['outcome'],
    registers: [registry],
  });
  counter.inc({ outcome: 'ok' }, sent);
  const gauge = new Gauge({
    name: 'x_in_flight',
    help: 'in flight',
    labelNames: ['lane'],
    registers: [registry],
  });
  gauge.set(lane ? { lane } : {}, inFlight);
  const histogram = new Histogram({
    name: 'x_seconds',
    help: 'seconds',
    buckets: [0.1, 1],
    registers: [registry],
  });
  histogram.observe(sent / 100);
  return registry;
}

test('series both threads write are added up; labelled ones and one-sided metrics stay as they are', async () => {
  const main = registryWith(3, 5);
  new Gauge({ name: 'x_main_only', help: 'main', registers: [main] }).set(7);
  const lane = registryWith(4, 2, 'urgent');
  const text = await metricsText(
    mergeMetrics(await main.getMetricsAsJSON(), await lane.getMetricsAsJSON()),
  );
  assert.match(text, /^x_sent_total\{outcome="ok"\} 7$/m);
  assert.match(text, /^x_in_flight 5$/m);
  assert.match(text, /^x_in_flight\{lane="urgent"\} 2$/m);
  assert.match(text, /^x_main_only 7$/m);
  // 0.03 s in one thread, 0.04 s in the other: both in the 0.1 bucket.
  assert.match(text, /^x_seconds_bucket\{le="0.1"\} 2$/m);
  assert.match(text, /^x_seconds_count 2$/m);
  assert.match(text, /^x_seconds_sum 0.07$/m);
  assert.equal(text.match(/^# TYPE x_sent_total counter$/gm)?.length, 1);
});

test("ferry's own registries merge: the process metrics once, from the main thread", async () => {
  const main = createMetrics();
  const lane = createMetrics(undefined, { processMetrics: false });
  main.envelopesSent.inc({ transport: 'sync', outcome: 'ok' }, 2);
  lane.envelopesSent.inc({ transport: 'sync', outcome: 'ok' }, 3);
  const laneJson = await lane.registry.getMetricsAsJSON();
  assert.ok(!laneJson.some((m) => m.name === 'process_cpu_seconds_total'));
  const text = await metricsText(mergeMetrics(await main.registry.getMetricsAsJSON(), laneJson));
  assert.match(text, /^ferry_envelopes_total\{transport="sync",outcome="ok"\} 5$/m);
  // A gauge both registries hold with the same labels is the main thread's, not twice it.
  assert.match(text, /^ferry_build_info\{[^}]*\} 1$/m);
  assert.equal(text.match(/^# TYPE process_cpu_seconds_total counter$/gm)?.length, 1);
  assert.match(text, /^process_start_time_seconds \d+/m);
});

test('promtool reads the merged text as it reads the main registry alone: no problem of its own', async (t) => {
  const main = createMetrics();
  const lane = createMetrics(undefined, { processMetrics: false });
  laneMetrics(lane, 'urgent').envelopesInFlight.set(2);
  laneMetrics(lane, 'urgent').endToEnd.observe({ type: 'sms' }, 0.1);
  main.endToEnd.observe({ type: 'sms' }, 0.2);
  const promtool = findTool('promtool');
  const check = (text: string) => {
    const run = spawnSync(promtool, ['check', 'metrics'], { input: text, encoding: 'utf8' });
    return `${run.stdout}${run.stderr}`.trim().split('\n').sort();
  };
  const alone = check(await main.registry.metrics());
  const merged = await metricsText(
    mergeMetrics(await main.registry.getMetricsAsJSON(), await lane.registry.getMetricsAsJSON()),
  );
  assert.deepEqual(check(merged), alone);
  t.diagnostic(`promtool on both: ${alone.length} lint lines (prom-client's own metric names)`);
  // The check can fail: a metric given twice is an error promtool names.
  const twice = `${merged}\n# HELP ferry_build_info again\n# TYPE ferry_build_info gauge\nferry_build_info 1\n`;
  assert.notDeepEqual(check(twice), alone);
});
