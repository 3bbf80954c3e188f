/**
 * Against the real broker: the port's `stableOffsets` (OffsetFetch v7 with require_stable)
 * waits while another producer's open transaction holds a partition's offset, and reads
 * what that transaction committed once it ended, or the offset before it once it was
 * aborted; a transaction that stays open past the wait is an error, not a stale answer.
 * And the shortfall it works around: kafkajs's `admin.fetchOffsets` answers the offset
 * before the open transaction at once, as if nothing were about to move it.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { FerryError } from '../../src/errors.ts';
import { KafkaClient } from '../../src/kafka/kafka-client.ts';
import { Kafka, logLevel, type Transaction } from '../../src/kafka/kafkajs.ts';
import { createLogger } from '../../src/observability/logger.ts';
import { createTopicsAndWait, testBrokers, uniqueTopic } from '../helpers/kafka.ts';

const kafka = new Kafka({
  clientId: 'stable-offsets-test',
  brokers: testBrokers(),
  logLevel: logLevel.NOTHING,
});
const client = new KafkaClient({
  brokers: testBrokers(),
  clientId: 'stable-offsets-test',
  logger: createLogger({ level: 'silent' }),
});
const commands = uniqueTopic('stable-commands');
const groupId = uniqueTopic('stable-group');
const producer = kafka.producer({
  transactionalId: uniqueTopic('stable-owner'),
  idempotent: true,
  maxInFlightRequests: 1,
});

before(async () => {
  const admin = kafka.admin();
  await admin.connect();
  try {
    await createTopicsAndWait(admin, testBrokers(), [{ topic: commands, numPartitions: 2 }]);
  } finally {
    await admin.disconnect();
  }
  await producer.connect();
});
after(async () => {
  await producer.disconnect().catch(() => undefined);
  await client.close();
});

/** A transaction of the owner with the group's offset of partition 0 added, left open. */
async function openWithOffset(offset: string): Promise<Transaction> {
  const transaction = await producer.transaction();
  await transaction.sendOffsets({
    consumerGroupId: groupId,
    topics: [{ topic: commands, partitions: [{ partition: 0, offset }] }],
  });
  return transaction;
}

/** Resolves true once `promise` settles within `ms`, false while it is still pending. */
async function settlesWithin(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let settled = false;
  const done = () => {
    settled = true;
  };
  promise.then(done, done);
  await sleep(ms);
  return settled;
}

async function kafkajsOffset(): Promise<string | undefined> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    const [topic] = await admin.fetchOffsets({ groupId, topics: [commands] });
    return topic?.partitions.find((p) => p.partition === 0)?.offset;
  } finally {
    await admin.disconnect();
  }
}

test('stable offsets: held while a transaction is open, its offset once it committed, the one before once it aborted', async () => {
  const never = await client.stableOffsets(groupId, commands, [0, 1], 5_000);
  assert.equal(never.get(0)?.offset, '-1', 'a group that never committed');
  assert.equal(never.get(1)?.offset, '-1');

  const first = await openWithOffset('7');
  assert.equal(
    await kafkajsOffset(),
    '-1',
    "kafkajs's read answers at once, before the transaction ends",
  );
  const reading = client.stableOffsets(groupId, commands, [0, 1], 20_000);
  assert.equal(await settlesWithin(reading, 1_000), false, 'held while the transaction is open');
  await first.commit();
  const committed = await reading;
  assert.equal(committed.get(0)?.offset, '7', 'the offset the transaction committed');
  assert.equal(committed.get(1)?.offset, '-1', 'a partition the transaction did not hold');

  const second = await openWithOffset('9');
  await assert.rejects(client.stableOffsets(groupId, commands, [0], 300), (error: unknown) => {
    assert.ok(error instanceof FerryError);
    assert.equal(error.code, 'kafka');
    assert.equal(error.retryable, true);
    assert.match(error.message, /still held by an open transaction after 300 ms/);
    return true;
  });
  const afterAbort = client.stableOffsets(groupId, commands, [0], 20_000);
  await second.abort();
  assert.equal((await afterAbort).get(0)?.offset, '7', 'aborted: the offset before it');
});
