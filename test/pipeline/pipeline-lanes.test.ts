/** The two lanes steered and seen as one, and the urgent lane's gauges kept apart. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { laneMetrics } from '../../src/observability/lane-metrics.ts';
import { createMetrics } from '../../src/observability/metrics.ts';
import type { DesiredConsumption } from '../../src/pipeline/consumption-mode.ts';
import type { Pipeline } from '../../src/pipeline/pipeline.ts';
import type { PipelineState } from '../../src/pipeline/pipeline-control.ts';
import { PipelineLanes } from '../../src/pipeline/pipeline-lanes.ts';

function lane(topic: string, overrides: Partial<PipelineState> = {}) {
  const calls: string[] = [];
  const state: PipelineState = {
    running: true,
    paused: false,
    pauseReasons: [],
    partitions: [{ topic, partition: 0, lag: 3 }],
    envelopesInFlight: 1,
    envelopesQueued: 2,
    commandsInFlight: 10,
    desired: 'running',
    phase: 'running',
    ...overrides,
  };
  const pipeline = {
    running: state.running,
    start: async () => void calls.push('start'),
    stop: async () => {
      calls.push('stop');
      return true;
    },
    pause: () => void calls.push('pause'),
    resume: () => void calls.push('resume'),
    setDesired: (desired: DesiredConsumption) => void calls.push(`desired ${desired}`),
    state: () => state,
  };
  return { pipeline: pipeline as unknown as Pipeline, calls };
}

test('an operator steers both lanes; the state adds the urgent lane to the bulk one', async () => {
  const bulk = lane('commands');
  const urgent = lane('commands.urgent', { phase: 'drained', lastError: 'denied' });
  const lanes = new PipelineLanes(bulk.pipeline, urgent.pipeline);
  await lanes.start();
  lanes.pause('operator');
  lanes.setDesired('draining');
  lanes.resume();
  assert.equal(await lanes.stop(1_000), true);
  for (const { calls } of [bulk, urgent]) {
    assert.deepEqual(calls, ['start', 'pause', 'desired draining', 'resume', 'stop']);
  }
  const state = lanes.state();
  assert.deepEqual(
    state.partitions.map((p) => p.topic),
    ['commands.urgent', 'commands'],
  );
  assert.equal(state.commandsInFlight, 20);
  assert.equal(state.envelopesInFlight, 2);
  assert.equal(state.envelopesQueued, 4);
  assert.equal(state.phase, 'running', 'drained only when both lanes are');
  assert.equal(state.lastError, 'denied');
  assert.equal(new PipelineLanes(bulk.pipeline).state(), bulk.pipeline.state(), 'one lane alone');
});

test("the urgent lane's gauges carry lane=urgent and leave the bulk lane's alone", async () => {
  const metrics = createMetrics();
  const urgent = laneMetrics(metrics, 'urgent');
  metrics.envelopesInFlight.set(5);
  urgent.envelopesInFlight.set(2);
  metrics.oldestUncommitted.set({ partition: '0' }, 1.5);
  urgent.oldestUncommitted.set({ partition: '0' }, 0.25);
  urgent.oldestUncommitted.remove({ partition: '0' });
  urgent.commandsConsumed.inc({ transport: 'sync' });
  const inFlight = await metrics.envelopesInFlight.get();
  assert.deepEqual(inFlight.values.map((v) => [v.labels.lane ?? 'bulk', v.value]).sort(), [
    ['bulk', 5],
    ['urgent', 2],
  ]);
  const oldest = await metrics.oldestUncommitted.get();
  assert.deepEqual(
    oldest.values.map((v) => [v.labels, v.value]),
    [[{ partition: '0' }, 1.5]],
    'removing the urgent series left the bulk one',
  );
  assert.equal((await metrics.commandsConsumed.get()).values[0]?.value, 1, 'counters are shared');
});

test("the urgent lane's latency histograms carry lane=urgent beside the bulk lane's", async () => {
  const metrics = createMetrics();
  const urgent = laneMetrics(metrics, 'urgent');
  metrics.stageDuration.observe({ stage: 'commit' }, 0.5);
  urgent.stageDuration.observe({ stage: 'commit' }, 0.02);
  urgent.endToEnd.observe({ type: 'sms' }, 0.1);
  const sums = (await metrics.stageDuration.get()).values
    .filter((v) => v.metricName === 'ferry_pipeline_stage_seconds_sum')
    .map((v) => [v.labels.lane ?? 'bulk', v.labels.stage, v.value])
    .sort();
  assert.deepEqual(sums, [
    ['bulk', 'commit', 0.5],
    ['urgent', 'commit', 0.02],
  ]);
  const endToEnd = (await metrics.endToEnd.get()).values.find(
    (v) => v.metricName === 'ferry_end_to_end_seconds_count',
  );
  assert.deepEqual(endToEnd?.labels, { type: 'sms', lane: 'urgent' });
});
