/**
 * Against the real broker, with kafkajs's own consumers and ferry's transactional producer:
 * offsets committed in a transaction carry the generation and member id that kafkajs holds
 * for a live consumer (TxnOffsetCommit v3), so a snapshot of an older generation is refused
 * and its transaction's records never become readable, while the live membership commits
 * through a rebalance; a member that left commits nothing. And the shortfall this works
 * around: kafkajs's own `sendOffsets` (v1) commits any group's offsets from a producer that
 * is no member at all.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { GroupMembership } from '../../src/kafka/group-fenced-offsets.ts';
import { liveMembership, membershipKnown } from '../../src/kafka/group-membership.ts';
import { KafkaClient } from '../../src/kafka/kafka-client.ts';
import { type Consumer, Kafka, logLevel } from '../../src/kafka/kafkajs.ts';
import { createLogger } from '../../src/observability/logger.ts';
import { createTopicsAndWait, testBrokers, uniqueTopic } from '../helpers/kafka.ts';

const kafka = new Kafka({
  clientId: 'generation-fenced-commits-test',
  brokers: testBrokers(),
  logLevel: logLevel.NOTHING,
});
const client = new KafkaClient({
  brokers: testBrokers(),
  clientId: 'generation-fenced-commits-test',
  logger: createLogger({ level: 'silent' }),
});
const commands = uniqueTopic('fenced-commands');
const results = uniqueTopic('fenced-results');
const groupId = uniqueTopic('fenced-group');
const consumers: Consumer[] = [];

before(async () => {
  const admin = kafka.admin();
  await admin.connect();
  try {
    await createTopicsAndWait(admin, testBrokers(), [
      { topic: commands, numPartitions: 2 },
      { topic: results, numPartitions: 1 },
    ]);
  } finally {
    await admin.disconnect();
  }
  // Records under the offsets committed below: an offset past the end of the log would make
  // kafkajs's consumers reset it (and commit the reset) when they fetch.
  const producer = kafka.producer();
  await producer.connect();
  await producer.send({
    topic: commands,
    messages: Array.from({ length: 20 }, (_, i) => ({ partition: 0, value: String(i) })),
  });
  await producer.disconnect();
});
after(async () => {
  await Promise.all(consumers.map((c) => c.disconnect().catch(() => undefined)));
  await client.close();
});

/** A kafkajs consumer of the group that commits nothing itself; resolves with its member id. */
async function member(): Promise<{ consumer: Consumer; memberId: () => string | undefined }> {
  const consumer = kafka.consumer({ groupId, sessionTimeout: 10_000, heartbeatInterval: 300 });
  consumers.push(consumer);
  let memberId: string | undefined;
  consumer.on(consumer.events.GROUP_JOIN, (event) => {
    memberId = event.payload.memberId;
  });
  await consumer.connect();
  await consumer.subscribe({ topic: commands, fromBeginning: true });
  await consumer.run({ autoCommit: false, eachBatch: async () => undefined });
  await until('the member joined', () => memberId !== undefined);
  return { consumer, memberId: () => memberId };
}

async function until(what: string, check: () => boolean, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await sleep(50);
  }
}

async function committedOffset(): Promise<string | undefined> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    const [topic] = await admin.fetchOffsets({ groupId, topics: [commands] });
    return topic?.partitions.find((p) => p.partition === 0)?.offset;
  } finally {
    await admin.disconnect();
  }
}

/** Every value of the results topic a read_committed reader sees, up to the value `last`. */
async function readableValues(last: string): Promise<string[]> {
  const reader = kafka.consumer({ groupId: uniqueTopic('fenced-reader'), readUncommitted: false });
  const values: string[] = [];
  await reader.connect();
  try {
    await reader.subscribe({ topic: results, fromBeginning: true });
    await reader.run({
      eachMessage: async ({ message }) => {
        values.push(message.value?.toString() ?? '');
      },
    });
    await until(`the reader saw ${last}`, () => values.includes(last));
  } finally {
    await reader.disconnect();
  }
  return values;
}

const offsets = (offset: string) => [{ topic: commands, partition: 0, offset }];
const record = (value: string) => [{ topic: results, key: value, value }];

test('kafkajs commits a group offset from a producer that is no member of the group', async () => {
  const producer = kafka.producer({
    transactionalId: uniqueTopic('plain-kafkajs'),
    idempotent: true,
    maxInFlightRequests: 1,
  });
  await producer.connect();
  try {
    const transaction = await producer.transaction();
    await transaction.sendOffsets({
      consumerGroupId: groupId,
      topics: [{ topic: commands, partitions: [{ partition: 0, offset: '7' }] }],
    });
    await transaction.commit();
  } finally {
    await producer.disconnect();
  }
  assert.equal(await committedOffset(), '7', 'kafkajs (TxnOffsetCommit v1) carries no membership');
});

test('offsets fenced by the live generation commit through a rebalance; an older generation and a member that left commit nothing', async (t) => {
  assert.ok(membershipKnown(), 'kafkajs is laid out as this module expects');
  const a = await member();
  const first = liveMembership(a.memberId());
  assert.ok(first, 'the live membership of a joined member');
  assert.equal(first.memberId, a.memberId());

  const live = client.createTransactionalProducer(uniqueTopic('fenced-live'), {
    fencedBy: () => liveMembership(a.memberId()),
  });
  t.after(() => live.disconnect());
  await live.connect();
  await live.commit(record('live-1'), groupId, offsets('11'));
  assert.equal(await committedOffset(), '11');

  // A second member joins: a rebalance, after which member a holds a newer generation.
  const stale: GroupMembership = first;
  const b = await member();
  await until(
    'member a rejoined in a newer generation',
    () => (liveMembership(a.memberId())?.generationId ?? 0) > stale.generationId,
  );
  assert.notEqual(b.memberId(), a.memberId());

  const zombie = client.createTransactionalProducer(uniqueTopic('fenced-stale'), {
    fencedBy: () => stale,
  });
  t.after(() => zombie.disconnect());
  await zombie.connect();
  await assert.rejects(zombie.commit(record('stale'), groupId, offsets('12')), (error: unknown) => {
    assert.match(String((error as Error).message), /generation/i);
    return true;
  });
  assert.equal(await committedOffset(), '11', 'the older generation committed nothing');

  await live.commit(record('live-2'), groupId, offsets('13'));
  assert.equal(await committedOffset(), '13', 'the live membership commits in the new generation');

  // Member a leaves: kafkajs forgets its id, and its offsets are refused without a request.
  await a.consumer.disconnect();
  assert.equal(liveMembership(a.memberId()), undefined);
  await assert.rejects(live.commit(record('left'), groupId, offsets('14')), (error: unknown) => {
    assert.match(String((error as Error).message), /not aware of this member/i);
    return true;
  });
  assert.equal(await committedOffset(), '13');

  const values = await readableValues('live-2');
  assert.deepEqual(values, ['live-1', 'live-2'], 'the refused transactions wrote nothing readable');
});
