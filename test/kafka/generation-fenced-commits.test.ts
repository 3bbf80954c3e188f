/**
 * Against the real broker, with kafkajs's own consumers and producers: offsets committed in
 * a transaction carry the generation and member id kafkajs holds for a consumer
 * (TxnOffsetCommit v3), so the membership of an older generation is refused and the records
 * its transaction had already written never become readable, while the membership of the
 * current generation commits; a member that left commits nothing. And the shortfall this
 * works around: kafkajs's own `sendOffsets` (v1) commits a group's offsets from a producer
 * that is no member of it, while the group has members.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { fenceOffsetsByGeneration } from '../../src/kafka/generation-fenced-commits.ts';
import type { GroupMembership } from '../../src/kafka/group-fenced-offsets.ts';
import { liveMembership, trackMemberships } from '../../src/kafka/group-membership.ts';
import { KafkaClient } from '../../src/kafka/kafka-client.ts';
import { type Consumer, Kafka, logLevel } from '../../src/kafka/kafkajs.ts';
import { createLogger } from '../../src/observability/logger.ts';
import { eventually } from '../helpers/fleet.ts';
import { joinedMember, readableValues } from '../helpers/group-members.ts';
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

const member = () => joinedMember(kafka, groupId, commands, consumers);

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

/** Waits until the group's committed offset of partition 0 is `offset` (commit markers land after EndTxn). */
function untilCommitted(offset: string): Promise<true> {
  return eventually(
    `committed offset ${offset}`,
    async () => ((await committedOffset()) === offset ? true : undefined),
    15_000,
  );
}

const offsets = (offset: string) => [{ topic: commands, partition: 0, offset }];
const record = (value: string) => [{ topic: results, key: value, value }];

/** A transaction of plain kafkajs: `value` written first, then the group offset `offset`. */
async function plainTransaction(
  transactionalId: string,
  value: string,
  offset: string,
): Promise<void> {
  const producer = kafka.producer({ transactionalId, idempotent: true, maxInFlightRequests: 1 });
  await producer.connect();
  try {
    const transaction = await producer.transaction();
    try {
      await transaction.send({ topic: results, messages: [{ key: value, value }] });
      await transaction.sendOffsets({
        consumerGroupId: groupId,
        topics: [{ topic: commands, partitions: [{ partition: 0, offset }] }],
      });
      await transaction.commit();
    } catch (error: unknown) {
      await transaction.abort().catch(() => undefined);
      throw error;
    }
  } finally {
    await producer.disconnect();
  }
}

test('offsets fenced by the generation: the current one commits, an older one and a member that left do not; kafkajs alone fences none', async (t) => {
  assert.ok(trackMemberships(), 'kafkajs is laid out as this module expects');
  const a = await member();
  const first = liveMembership(a.memberId());
  assert.ok(first, 'the membership of a member whose join completed');
  assert.equal(first.memberId, a.memberId());

  // The shortfall: kafkajs's v1 request names no member, and the coordinator takes it
  // while member a owns the group's partitions.
  await plainTransaction(uniqueTopic('plain-kafkajs'), 'unfenced', '7');
  await untilCommitted('7');

  const live = client.createTransactionalProducer(uniqueTopic('fenced-live'), {
    fencedBy: () => liveMembership(a.memberId()),
  });
  t.after(() => live.disconnect());
  await live.connect();
  await live.commit(record('live-1'), groupId, offsets('11'));
  await untilCommitted('11');

  // A second member joins: a rebalance, after which member a holds a newer generation.
  const stale: GroupMembership = first;
  const b = await member();
  await eventually('member a rejoined in a newer generation', async () =>
    (liveMembership(a.memberId())?.generationId ?? 0) > stale.generationId ? true : undefined,
  );
  assert.notEqual(b.memberId(), a.memberId());

  // A transaction that wrote its record first, then offered the older generation's offsets.
  const zombieId = uniqueTopic('fenced-stale');
  const unfence = fenceOffsetsByGeneration(zombieId, () => stale);
  t.after(unfence);
  await assert.rejects(plainTransaction(zombieId, 'stale', '12'), (error: unknown) => {
    assert.equal((error as { type?: unknown }).type, 'ILLEGAL_GENERATION');
    return true;
  });
  assert.equal(await committedOffset(), '11', 'the older generation committed nothing');

  // Which partitions a membership commits is the committer's to know: the coordinator
  // checks the member and its generation only.
  await live.commit(record('live-2'), groupId, offsets('13'));
  await untilCommitted('13');

  // Member a leaves: kafkajs forgets its id, and its offsets are refused without a request.
  await a.consumer.disconnect();
  assert.equal(liveMembership(a.memberId()), undefined);
  await assert.rejects(live.commit(record('left'), groupId, offsets('14')), (error: unknown) => {
    assert.match(String((error as Error).message), /not aware of this member/i);
    return true;
  });
  assert.equal(await committedOffset(), '13');

  const values = await readableValues(kafka, results, 'live-2');
  assert.deepEqual(
    values,
    ['unfenced', 'live-1', 'live-2'],
    'the refused transactions left nothing readable, the record written before the refusal included',
  );
});
