/**
 * A replica takes its partitions over when the group assigns them, not when their first
 * command arrives: before any command, the previous owner (here a plain kafkajs producer
 * holding a partition's transactional id with a transaction open) is fenced, and ferry
 * reports ready only then. Where commands are already waiting, the send intent is written
 * then too, and the first batches go out with neither a takeover nor an intent
 * transaction on their path; an idle partition gets no intent.
 */
import assert from 'node:assert/strict';
import { type TestContext, test } from 'node:test';
import { Kafka, logLevel } from 'kafkajs';
import { partitionTransactionalId } from '../../src/pipeline/partition-transactions.ts';
import { smsOperation } from '../fixtures/operations.ts';
import {
  command,
  readRecords,
  startEmulator,
  startFerry,
  testKafka,
  testTopics,
  untilReady,
} from '../helpers/ferry.ts';
import { testBrokers } from '../helpers/kafka.ts';

const PARTITIONS = 2;

/** The commands and results topics, created with PARTITIONS partitions before ferry starts. */
async function topicsOf(t: TestContext) {
  const topics = testTopics();
  const kafka = testKafka(t);
  await kafka.ensureTopics(
    [topics.commands, topics.results].map((topic) => ({
      topic,
      partitions: PARTITIONS,
      replicationFactor: 1,
    })),
  );
  return { topics, kafka };
}

test('idle partitions are fenced at assignment, before any command, and get no intent', {
  timeout: 90_000,
}, async (t) => {
  const { topics } = await topicsOf(t);
  // The previous owner of partition 0: a transaction open with a result in it.
  const raw = new Kafka({
    brokers: testBrokers(),
    clientId: 'previous-owner',
    logLevel: logLevel.NOTHING,
  });
  const previous = raw.producer({
    transactionalId: partitionTransactionalId(topics.group, topics.group, topics.commands, 0),
    idempotent: true,
    maxInFlightRequests: 1,
  });
  await previous.connect();
  t.after(() => previous.disconnect());
  const open = await previous.transaction();
  await open.send({ topic: topics.results, messages: [{ key: 'zombie', value: 'late result' }] });

  const emulator = await startEmulator(t);
  const ferry = await startFerry(
    t,
    emulator,
    { FERRY_TOPIC_PARTITIONS: String(PARTITIONS) },
    topics,
  );
  // Ready means taken over: wait for it, as a rollout does.
  await untilReady(ferry);

  // No command was produced, yet the previous owner can no longer commit.
  await assert.rejects(open.commit(), /fenced|epoch/i);

  // Nothing waits on the partitions: no intent is written for them, so their next owner
  // has no sends of this replica to wait out and look up.
  const admin = raw.admin();
  await admin.connect();
  t.after(() => admin.disconnect());
  const [entry] = await admin.fetchOffsets({ groupId: topics.group, topics: [topics.commands] });
  assert.deepEqual(
    entry?.partitions.map((p) => [p.partition, p.offset, p.metadata ?? null]).sort(),
    [
      [0, '-1', null],
      [1, '-1', null],
    ],
  );
});

test('partitions with commands waiting get their intent at assignment: no batch writes one', {
  timeout: 90_000,
}, async (t) => {
  const { topics, kafka } = await topicsOf(t);
  const producer = kafka.createProducer();
  await producer.connect();
  t.after(() => producer.disconnect());
  const ids = [82_000, 82_001, 82_002, 82_003];
  await producer.send(
    ids.map((id, index) => ({
      ...command(topics.commands, smsOperation(id)),
      partition: index % PARTITIONS,
    })),
  );
  const emulator = await startEmulator(t);
  const ferry = await startFerry(
    t,
    emulator,
    { FERRY_TOPIC_PARTITIONS: String(PARTITIONS) },
    topics,
  );
  const results = await readRecords(t, topics.results, ids.length, { settleMs: 500 });
  assert.deepEqual(results.map((r) => r.value.id).sort(), ids, 'one result per command');
  const stage = (await ferry.metrics.stageDuration.get()).values;
  const count = (name: string) =>
    stage.find((v) => v.labels.stage === name && v.metricName?.endsWith('_count'))?.value ?? 0;
  assert.ok(count('send') > 0, 'the batches were sent');
  assert.equal(count('intent'), 0, 'no batch wrote an intent of its own');
});
