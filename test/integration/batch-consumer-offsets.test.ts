/**
 * What the pipeline reads of kafkajs's batches against a real broker: the offset each
 * fetch began at (`fetchedOffset`, which kafkajs sets on its batches but leaves out of
 * its types) and a rewind to a given offset, which the takeover uses to read a partition
 * from its group offset when kafkajs began past it.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { KafkaClient, type RecordBatch } from '../../src/kafka/kafka-client.ts';
import { testLogger } from '../helpers/ferry.ts';
import { kcatWrite } from '../helpers/fleet.ts';
import { testBrokers, uniqueTopic } from '../helpers/kafka.ts';

test('a batch tells the offset its fetch began at, and a rewind to an offset reads from there', {
  timeout: 60_000,
}, async (t) => {
  const topic = uniqueTopic('offsets');
  const client = new KafkaClient({
    brokers: testBrokers(),
    clientId: 'offsets-test',
    logger: testLogger(),
  });
  t.after(() => client.close());
  await client.ensureTopics([{ topic, partitions: 1, replicationFactor: 1 }]);
  // Written by kcat (librdkafka), one record at a time: offsets 0 to 5.
  for (let i = 0; i < 6; i += 1) {
    await kcatWrite(testBrokers().join(','), topic, `k${i}`, `{"n":${i}}`);
  }
  const batches: RecordBatch[] = [];
  const consumer = client.createBatchConsumer({
    groupId: `${topic}.group`,
    topic,
    sessionTimeoutMs: 10_000,
    onBatch: (batch) => {
      batches.push(batch);
    },
  });
  await consumer.start();
  t.after(() => consumer.stop());
  const until = async (count: number) => {
    const deadline = Date.now() + 30_000;
    while (batches.flatMap((b) => b.records).length < count) {
      assert.ok(Date.now() < deadline, `read ${count} records`);
      await sleep(50);
    }
  };
  await until(6);
  const [first] = batches;
  assert.equal(first?.fetchedOffset, '0');
  assert.equal(first?.records[0]?.offset, '0');

  first?.rewind('4');
  const before = batches.length;
  await until(6 + 2);
  const again = batches.slice(before);
  assert.equal(again[0]?.fetchedOffset, '4');
  assert.deepEqual(
    again.flatMap((b) => b.records.map((r) => r.offset)),
    ['4', '5'],
  );
});
