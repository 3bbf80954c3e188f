/**
 * A replica that was frozen (GC pause, node stall, SIGSTOP) past its session wakes up
 * with answers in hand and tries to commit them. The broker must refuse that commit
 * once the new owner of the partition has connected its transactional producer.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Kafka, logLevel } from 'kafkajs';
import { KafkaClient } from '../../src/kafka/kafka-client.ts';
import { testLogger } from '../helpers/ferry.ts';
import { testBrokers, uniqueTopic } from '../helpers/kafka.ts';

async function setUp(t: import('node:test').TestContext) {
  const topic = uniqueTopic('fence');
  const group = `${topic}.group`;
  const client = new KafkaClient({
    brokers: testBrokers(),
    clientId: 'fence-test',
    logger: testLogger(),
  });
  t.after(() => client.close());
  await client.ensureTopics([{ topic, partitions: 1, replicationFactor: 1 }]);
  return { client, topic, group, transactionalId: `${topic}-tx` };
}

const record = (topic: string, value: string) => ({ topic, key: 'k', value });

test("a connected new owner fences the zombie: the broker refuses the zombie's commit", async (t) => {
  const { client, topic, group, transactionalId } = await setUp(t);
  const zombie = client.createTransactionalProducer(transactionalId);
  await zombie.connect();
  t.after(() => zombie.disconnect());
  // The new owner only connects, as a takeover does before it reads the group offset.
  const owner = client.createTransactionalProducer(transactionalId);
  await owner.connect();
  t.after(() => owner.disconnect());

  await assert.rejects(
    zombie.commit([record(topic, 'from the zombie')], group, [
      { topic, partition: 0, offset: '1', metadata: null },
    ]),
    /fenced|epoch/i,
  );
  await owner.commit([record(topic, 'from the owner')], group, [
    { topic, partition: 0, offset: '1', metadata: null },
  ]);
  // EndTxn returns before the coordinator wrote its markers: the offset shows up shortly.
  let committed: string | undefined;
  for (let i = 0; i < 50 && committed !== '1'; i++) {
    committed = (await client.committedOffsets(group, topic)).get(0)?.offset;
    if (committed !== '1') await new Promise((r) => setTimeout(r, 100));
  }
  assert.equal(committed, '1', "the owner's commit went through");
});

test('kafkajs alone does not fence on connect: that is why ferry initialises the id itself', async (t) => {
  // The shortfall ferry works around in TransactionalProducer.connect: a kafkajs
  // transactional producer registers its transactional id only at its first
  // transaction, so a connected new owner leaves the zombie free to commit.
  const { topic, transactionalId } = await setUp(t);
  const kafka = new Kafka({
    clientId: 'fence-test-raw',
    brokers: testBrokers(),
    logLevel: logLevel.NOTHING,
  });
  const options = { transactionalId, idempotent: true, maxInFlightRequests: 1 };
  const zombie = kafka.producer(options);
  await zombie.connect();
  const first = await zombie.transaction();
  await first.send({ topic, messages: [{ value: 'before the freeze' }] });
  await first.commit();
  t.after(() => zombie.disconnect());

  const owner = kafka.producer(options);
  await owner.connect();
  t.after(() => owner.disconnect());

  const late = await zombie.transaction();
  await late.send({ topic, messages: [{ value: 'after the new owner connected' }] });
  await late.commit(); // accepted: nothing fenced the zombie
});
