/**
 * kafkajs rejoins a rebalancing group as soon as it learns of the rebalance; the callback
 * of src/kafka/rejoin-hook.ts runs first, and the real group coordinator waits for it:
 * the member joining meanwhile gets its partitions only after the callback ended.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { type Consumer, Kafka, logLevel } from '../../src/kafka/kafkajs.ts';
import { beforeRejoin } from '../../src/kafka/rejoin-hook.ts';
import { createTopicsAndWait, testBrokers, uniqueTopic } from '../helpers/kafka.ts';

const kafka = new Kafka({
  clientId: 'rejoin-hook-test',
  brokers: testBrokers(),
  logLevel: logLevel.NOTHING,
});
const topic = uniqueTopic('rejoin-hook');
const consumers: Consumer[] = [];

before(async () => {
  const admin = kafka.admin();
  await admin.connect();
  try {
    await createTopicsAndWait(admin, testBrokers(), [{ topic, numPartitions: 2 }]);
  } finally {
    await admin.disconnect();
  }
});
after(() => Promise.all(consumers.map((consumer) => consumer.disconnect())));

/** A member of `groupId` that records when each of its joins completed, and its member id. */
async function member(groupId: string) {
  const consumer = kafka.consumer({ groupId, sessionTimeout: 10_000, heartbeatInterval: 300 });
  consumers.push(consumer);
  const joins: { at: number; memberId: string; partitions: number[] }[] = [];
  consumer.on(consumer.events.GROUP_JOIN, (event) => {
    joins.push({
      at: Date.now(),
      memberId: event.payload.memberId,
      partitions: [...(event.payload.memberAssignment[topic] ?? [])],
    });
  });
  await consumer.connect();
  await consumer.subscribe({ topics: [topic] });
  await consumer.run({ autoCommit: false, eachBatch: async () => undefined });
  return { consumer, joins };
}

async function until(what: string, done: () => boolean, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!done()) {
    assert.ok(Date.now() < deadline, `timed out waiting for ${what}`);
    await sleep(20);
  }
}

test('the callback runs before the member rejoins, and the group waits for it', async () => {
  const groupId = uniqueTopic('rejoin-hook-group');
  const first = await member(groupId);
  await until('the first join', () => first.joins.length === 1);
  const memberId = first.joins[0]?.memberId as string;
  const calls: { startedAt: number; endedAt: number }[] = [];
  const forget = beforeRejoin(memberId, async () => {
    const startedAt = Date.now();
    await sleep(1_500);
    calls.push({ startedAt, endedAt: Date.now() });
  });

  const second = await member(groupId);
  await until('both joined again', () => first.joins.length === 2 && second.joins.length === 1);
  assert.equal(calls.length, 1, 'the callback ran once, before the rejoin');
  const call = calls[0] as { startedAt: number; endedAt: number };
  assert.ok(
    (second.joins[0]?.at ?? 0) >= call.endedAt,
    'the joining member got its partitions only after the callback ended',
  );
  assert.ok((first.joins[1]?.at ?? 0) >= call.endedAt);
  assert.equal(first.joins[1]?.memberId, memberId, 'the same member rejoined');
  const partitions = [
    ...(first.joins[1]?.partitions ?? []),
    ...(second.joins[0]?.partitions ?? []),
  ];
  assert.deepEqual(partitions.sort(), [0, 1], 'the topic is shared between the two');

  // Removed, it no longer runs: a third member's arrival rejoins the first at once.
  forget();
  const third = await member(groupId);
  await until('the third joined', () => third.joins.length === 1 && first.joins.length === 3);
  assert.equal(calls.length, 1);
});
