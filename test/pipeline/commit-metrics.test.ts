import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { InboundRecord } from '../../src/kafka/kafka-client.ts';
import { createMetrics } from '../../src/observability/metrics.ts';
import type { Command } from '../../src/pipeline/command.ts';
import { CommitMetrics } from '../../src/pipeline/commit-metrics.ts';
import type { Result } from '../../src/pipeline/result.ts';

async function ages(metrics: ReturnType<typeof createMetrics>): Promise<Record<string, number>> {
  const { values } = await metrics.oldestUncommitted.get();
  return Object.fromEntries(values.map((v) => [String(v.labels.partition), v.value]));
}

function record(partition: number, offset: string, timestamp: number): InboundRecord {
  return {
    topic: 'ferry.commands',
    partition,
    offset,
    key: null,
    value: null,
    headers: {},
    timestamp: String(timestamp),
  };
}

test('the age of the oldest uncommitted command counts from its first read, per owned partition', async () => {
  const metrics = createMetrics();
  let now = 1_000_000;
  const tracker = new CommitMetrics({ metrics, now: () => now });
  tracker.owned([0, 1]);
  assert.deepEqual(await ages(metrics), { '0': 0, '1': 0 });

  tracker.read(0, '9');
  now += 2_500;
  tracker.refresh();
  assert.deepEqual(await ages(metrics), { '0': 2.5, '1': 0 });

  // Read again after a rebalance or a failed commit: the age goes on from the first read.
  tracker.read(0, '9');
  tracker.read(0, '14');
  now += 1_000;
  tracker.refresh();
  assert.deepEqual(await ages(metrics), { '0': 3.5, '1': 0 });

  // Offsets up to 9 committed: what was read later is the oldest now.
  tracker.done(0, '9');
  assert.deepEqual(await ages(metrics), { '0': 1, '1': 0 });
  tracker.done(0, '14');
  assert.deepEqual(await ages(metrics), { '0': 0, '1': 0 });
  // The same ages in ms, for the stall warning.
  tracker.read(1, '3');
  now += 700;
  assert.deepEqual(
    [...tracker.ages()],
    [
      [0, 0],
      [1, 700],
    ],
  );

  // A lost partition loses its series; a new one starts at 0.
  tracker.read(1, '3');
  tracker.owned([0, 2]);
  assert.deepEqual(await ages(metrics), { '0': 0, '2': 0 });
});

test('committed results give end-to-end times by type and sends by channel', async () => {
  const metrics = createMetrics();
  const now = 5_000_000;
  const tracker = new CommitMetrics({ metrics, now: () => now });
  const commands = [
    { kind: 'valid', record: record(0, '1', now - 1_200), type: 'rcs+sms' },
    { kind: 'valid', record: record(0, '2', now - 300), type: 'call/otp' },
    { kind: 'valid', record: record(0, '3', now + 500), type: 'balance' },
    { kind: 'valid', record: record(0, '4', now - 100), type: 'sms' },
  ] as unknown as Command[];
  const result = (type: string, success: boolean): Result => ({
    type,
    success,
    stage: 'upstream',
    transport: 'sync',
    attempts: 1,
    completed_at: '',
  });
  tracker.committed(commands, [
    result('rcs+sms', true),
    result('call/otp', true),
    result('balance', true),
    result('sms', false),
  ]);
  const sent = Object.fromEntries(
    (await metrics.messagesSent.get()).values.map((v) => [v.labels.channel, v.value]),
  );
  assert.deepEqual(sent, { sms: 0, viber: 0, rcs: 0, telegram: 0, voice: 1, pipeline: 1 });
  const sums = Object.fromEntries(
    (await metrics.endToEnd.get()).values
      .filter((v) => v.metricName === 'ferry_end_to_end_seconds_sum')
      .map((v) => [v.labels.type, v.value]),
  );
  // A producer clock ahead of ferry's counts as 0, never negative.
  assert.deepEqual(sums, { 'rcs+sms': 1.2, 'call/otp': 0.3, balance: 0, sms: 0.1 });
});
