/**
 * A rebalance that leaves a partition with the replica that just committed it: the
 * takeover must read the group offset that commit wrote. EndTxn returns before the
 * transaction coordinator has written its markers, and until then the group
 * coordinator answers an offset fetch (kafkajs has no `require_stable`) with the offset
 * from before the commit, and with this replica's own intent beside it. Read that way,
 * the batch just committed would be read again, sent again without a lookup (the
 * intent is this process's own, its outcomes already settled) and committed again.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { KafkaClient, type RecordBatch } from '../../src/kafka/kafka-client.ts';
import { createMetrics } from '../../src/observability/metrics.ts';
import { PartitionHandover } from '../../src/pipeline/partition-handover.ts';
import { PartitionOwnership } from '../../src/pipeline/partition-ownership.ts';
import { PartitionTransactions } from '../../src/pipeline/partition-transactions.ts';
import { testLogger } from '../helpers/ferry.ts';
import { testBrokers, uniqueTopic } from '../helpers/kafka.ts';

/** Commits, each followed at once by a rebalance that keeps the partition here. */
const ROUNDS = 60;

test("a takeover right after this replica's own commit reads the offset that commit wrote", {
  timeout: 120_000,
}, async (t) => {
  const topic = uniqueTopic('takeover');
  const results = `${topic}.results`;
  const group = `${topic}.group`;
  const logger = testLogger();
  const client = new KafkaClient({ brokers: testBrokers(), clientId: 'takeover-test', logger });
  t.after(() => client.close());
  await client.ensureTopics([
    { topic, partitions: 1, replicationFactor: 1 },
    { topic: results, partitions: 1, replicationFactor: 1 },
  ]);

  // A real member of the group (fetching nothing): a takeover first asks the coordinator
  // whether the group is stable with this member in it.
  const consumer = client.createBatchConsumer({
    groupId: group,
    topic,
    sessionTimeoutMs: 10_000,
    onBatch: async () => 'again',
  });
  await consumer.start({ paused: true });
  t.after(() => consumer.stop());
  const deadline = Date.now() + 30_000;
  while (!(await client.isStableMember(group, consumer.memberId).catch(() => false))) {
    assert.ok(Date.now() < deadline, 'the member joined a stable group');
    await sleep(200);
  }

  const transactions = new PartitionTransactions({
    kafka: client,
    groupId: group,
    topic,
    transactionalIdPrefix: 'takeover-test',
    logger,
    metrics: createMetrics(),
  });
  t.after(() => transactions.close());
  const ownership = new PartitionOwnership();
  const handover = new PartitionHandover({
    kafka: client,
    groupId: group,
    transactions,
    ownership,
    logger,
    instanceId: 'this-process',
    memberId: () => consumer.memberId,
    inDoubtSettleMs: 0,
    fencedHoldMs: 10_000,
  });
  const signal = new AbortController().signal;
  const batch: RecordBatch = {
    topic,
    partition: 0,
    records: [],
    lag: 0,
    heartbeat: async () => 'ok' as const,
    isCurrent: () => true,
    rewind: () => undefined,
  };

  ownership.assigned([0], consumer.memberId);
  assert.equal(await handover.takeOver(0, signal, ownership.assignment), 'done');
  const misread: string[] = [];
  for (let round = 1; round <= ROUNDS; round += 1) {
    const lastOffset = String(round * 10 - 1);
    const next = String(round * 10);
    const intent = { untilOffset: String(round * 10 + 9), atMs: Date.now(), by: 'this-process' };
    const committed = await handover.commit(
      batch,
      [{ topic: results, key: next, value: `result of ${lastOffset}` }],
      next,
      intent,
      ownership.generation,
      ownership.assignment,
    );
    assert.equal(committed, true, `round ${round} committed`);
    ownership.batchCommitted(0, {
      topic,
      lastOffset,
      intentUntil: intent.untilOffset,
      assignment: ownership.assignment,
    });
    // The group rebalances and gives the partition back to this member at once.
    ownership.assigned([0], consumer.memberId);
    const takeover = await handover.takeOver(0, signal, ownership.assignment);
    const floor = ownership.floor(0);
    if (takeover !== 'done' || floor !== BigInt(next)) {
      misread.push(`round ${round}: ${takeover}, group offset read ${floor}, committed ${next}`);
    }
  }
  assert.deepEqual(misread, [], 'every takeover read the offset committed just before it');
});
