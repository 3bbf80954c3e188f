/**
 * Against the real broker, with kafkajs's own consumer as the group member: the lane's one
 * transactional producer (lane-transactions.ts) commits the commits of several partitions
 * asked for together in one transaction, records and offsets visible together; commits of
 * an older generation are refused (nothing of them visible) while the current one commits;
 * a commit with no membership known sends nothing.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { GroupMembership } from '../../src/kafka/group-fenced-offsets.ts';
import { liveMembership, trackMemberships } from '../../src/kafka/group-membership.ts';
import { KafkaClient } from '../../src/kafka/kafka-client.ts';
import { type Consumer, Kafka, logLevel } from '../../src/kafka/kafkajs.ts';
import { createLogger } from '../../src/observability/logger.ts';
import { LaneTransactions } from '../../src/pipeline/lane-transactions.ts';
import { eventually } from '../helpers/fleet.ts';
import { joinedMember, readableValues } from '../helpers/group-members.ts';
import { createTopicsAndWait, testBrokers, uniqueTopic } from '../helpers/kafka.ts';

const kafka = new Kafka({
  clientId: 'lane-transactions-test',
  brokers: testBrokers(),
  logLevel: logLevel.NOTHING,
});
const client = new KafkaClient({
  brokers: testBrokers(),
  clientId: 'lane-transactions-test',
  logger: createLogger({ level: 'silent' }),
});
const commands = uniqueTopic('lane-commands');
const results = uniqueTopic('lane-results');
const groupId = uniqueTopic('lane-group');
const consumers: Consumer[] = [];
const lane = new LaneTransactions({
  kafka: client,
  groupId,
  transactionalId: uniqueTopic('lane'),
  transactionTimeoutMs: 10_000,
  logger: createLogger({ level: 'silent' }),
});

before(async () => {
  const admin = kafka.admin();
  await admin.connect();
  try {
    await createTopicsAndWait(admin, testBrokers(), [
      { topic: commands, numPartitions: 3 },
      { topic: results, numPartitions: 1 },
    ]);
  } finally {
    await admin.disconnect();
  }
  // Records under the offsets committed below (kafkajs's consumers reset an offset past the end).
  const producer = kafka.producer();
  await producer.connect();
  await producer.send({
    topic: commands,
    messages: [0, 1, 2].flatMap((partition) =>
      Array.from({ length: 20 }, (_, i) => ({ partition, value: String(i) })),
    ),
  });
  await producer.disconnect();
});
after(async () => {
  await lane.close();
  await Promise.all(consumers.map((c) => c.disconnect().catch(() => undefined)));
  await client.close();
});

async function member(): Promise<() => GroupMembership | undefined> {
  const { memberId } = await joinedMember(kafka, groupId, commands, consumers);
  await eventually('its membership is known', async () => liveMembership(memberId()));
  return () => liveMembership(memberId());
}

const commit = (partition: number, offset: string, membership: () => GroupMembership | undefined) =>
  lane.commit({
    records: [{ topic: results, key: `p${partition}-${offset}`, value: `p${partition}-${offset}` }],
    offset: { topic: commands, partition, offset, metadata: `m${offset}` },
    membership,
  });

test('a lane commits its partitions together, fenced by the membership their batches were fetched under', async () => {
  assert.ok(trackMemberships(), 'kafkajs is laid out as this module expects');
  const a = await member();
  const first = a();
  assert.ok(first);

  // Three partitions asked together: one transaction.
  const outcomes = await Promise.all([0, 1, 2].map((p) => commit(p, '5', () => first)));
  assert.deepEqual(outcomes, ['committed', 'committed', 'committed']);
  assert.deepEqual(lane.stats, { transactions: 1, commits: 3 });
  const stable = await client.stableOffsets(groupId, commands, [0, 1, 2], 10_000);
  assert.deepEqual(
    [0, 1, 2].map((p) => [stable.get(p)?.offset, stable.get(p)?.metadata]),
    [
      ['5', 'm5'],
      ['5', 'm5'],
      ['5', 'm5'],
    ],
  );

  // A second member: the group moves to a newer generation.
  await member();
  await eventually('member a rejoined in a newer generation', async () =>
    (a()?.generationId ?? 0) > first.generationId ? true : undefined,
  );
  const current = a();
  assert.ok(current);
  // Batches fetched before the rebalance, and one fetched after it, asked together: the
  // older generation's are refused whole, the current one's commit on their own.
  const [stale0, stale1, live2] = await Promise.all([
    commit(0, '9', () => first),
    commit(1, '9', () => first),
    commit(2, '9', () => current),
  ]);
  assert.deepEqual([stale0, stale1, live2], ['refused', 'refused', 'committed']);
  assert.equal(await commit(0, '10', () => undefined), 'unfenced', 'no membership: nothing sent');

  const after = await client.stableOffsets(groupId, commands, [0, 1, 2], 10_000);
  assert.deepEqual(
    [0, 1, 2].map((p) => after.get(p)?.offset),
    ['5', '5', '9'],
  );
  const values = await readableValues(kafka, results, 'p2-9');
  assert.ok(
    !values.includes('p0-9') && !values.includes('p1-9'),
    'the refused records never readable',
  );
  assert.ok(values.includes('p0-5') && values.includes('p1-5') && values.includes('p2-5'));
});
