import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setImmediate as tick } from 'node:timers/promises';
import type { InboundRecord, RecordBatch } from '../../src/kafka/kafka-client.ts';
import { createLogger } from '../../src/observability/logger.ts';
import { createMetrics } from '../../src/observability/metrics.ts';
import type { BatchProcessor } from '../../src/pipeline/batch-processor.ts';
import { CommitMetrics } from '../../src/pipeline/commit-metrics.ts';
import { PartitionOwnership } from '../../src/pipeline/partition-ownership.ts';
import { type LaneBatch, PartitionTurns } from '../../src/pipeline/partition-turns.ts';
import { PartitionWorkers } from '../../src/pipeline/partition-worker.ts';
import type { SendPhase } from '../../src/pipeline/sent-batch.ts';

/** A fetched batch of partition 0 whose rewinds are counted. */
function fetched(first: number, last: number) {
  let rewinds = 0;
  const records: InboundRecord[] = [];
  for (let offset = first; offset <= last; offset += 1) {
    records.push({
      topic: 'commands',
      partition: 0,
      offset: String(offset),
      key: null,
      value: null,
      headers: {},
      timestamp: String(Date.now()),
    });
  }
  const batch: RecordBatch = {
    topic: 'commands',
    partition: 0,
    records,
    lag: 0,
    heartbeat: async () => 'ok' as const,
    isCurrent: () => true,
    rewind: () => {
      rewinds += 1;
    },
  };
  const lane: LaneBatch = { batch, receivedMs: Date.now(), bytes: 0 };
  return { lane, rewinds: () => rewinds };
}

/**
 * The turns of partition 0 with a processor that hands every batch out at once (its
 * commands answered), lets a batch send ahead of earlier ones, and commits only when
 * the test says so.
 */
function setUp() {
  const workers = new PartitionWorkers();
  const ownership = new PartitionOwnership(workers);
  const commits: { batches: number; settle: (committed: boolean) => void }[] = [];
  const carried: string[] = [];
  const processor = {
    canSendAhead: () => true,
    send: async (batch: RecordBatch): Promise<SendPhase> => ({
      commands: [],
      pending: [Promise.resolve(undefined)],
      lastOffset: batch.records[batch.records.length - 1]?.offset ?? '0',
      inboundLength: batch.records.length,
      startedMs: performance.now(),
      intentMs: 0,
    }),
    commit: (_partition: number, sent: readonly unknown[]) =>
      new Promise<boolean>((settle) => commits.push({ batches: sent.length, settle })),
    carry: (_partition: number, _commands: unknown, pending: readonly unknown[]) => {
      carried.push(`${pending.length}`);
    },
  } as unknown as BatchProcessor;
  const metrics = createMetrics();
  const turns = new PartitionTurns({
    processor,
    ownership,
    workers,
    commitMetrics: new CommitMetrics({ metrics }),
    metrics,
    logger: createLogger({ level: 'silent' }),
    commitGapMs: 0,
    stopping: () => false,
    release: () => undefined,
    heartbeatIntervalMs: () => 1_000,
  });
  return { ownership, turns, commits, carried };
}

async function until(condition: () => boolean): Promise<void> {
  for (let i = 0; i < 1_000 && !condition(); i += 1) await tick();
  assert.ok(condition(), 'never happened');
}

test("a failed commit among whose batches is the current assignment's read rewinds, from the oldest", async () => {
  const { ownership, turns, commits, carried } = setUp();
  ownership.assigned([0], 'm1');
  const before = fetched(0, 9);
  turns.enter(0, before.lane);
  await until(() => commits.length === 1);

  // The group answers: kafkajs reads the partition again from the group offset, and
  // that read is handed over while the older batch still commits.
  ownership.assigned([0], 'm1');
  const reread = fetched(0, 19);
  turns.enter(0, reread.lane);
  await tick();
  await tick();

  commits[0]?.settle(false);
  await turns.idle();
  assert.equal(carried.length, 2, 'both batches keep their answers');
  // The current assignment's read is fetched again, from the oldest failed batch: at or
  // after the group offset, so nothing is skipped whatever offset that read began at.
  assert.equal(before.rewinds(), 1);
  assert.equal(reread.rewinds(), 0);
});

test('a failed commit of the current assignment alone rewinds its oldest batch', async () => {
  const { ownership, turns, commits } = setUp();
  ownership.assigned([0], 'm1');
  const first = fetched(0, 9);
  turns.enter(0, first.lane);
  await until(() => commits.length === 1);
  const second = fetched(10, 19);
  turns.enter(0, second.lane);
  await tick();
  await tick();
  commits[0]?.settle(false);
  await turns.idle();
  assert.equal(first.rewinds(), 1);
  assert.equal(second.rewinds(), 0, 'read again from the first one anyway');
});

test('a failed commit of an older assignment alone rewinds nothing: the rejoin reads it again', async () => {
  const { ownership, turns, commits } = setUp();
  ownership.assigned([0], 'm1');
  const before = fetched(0, 9);
  turns.enter(0, before.lane);
  await until(() => commits.length === 1);
  ownership.assigned([0], 'm1');
  commits[0]?.settle(false);
  await turns.idle();
  assert.equal(before.rewinds(), 0);
});
