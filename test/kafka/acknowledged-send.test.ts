/**
 * ferry picks each record's partition itself so that it can check every partition
 * was acknowledged (src/kafka/acknowledged-send.ts). Placement must not change for
 * that: a key goes where Java's default partitioner (murmur2) puts it, which is what
 * librdkafka's `murmur2_random` partitioner does too — kcat checks it here.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { test } from 'node:test';
import { promisify } from 'node:util';
import { PartitionAssigner, unacknowledged } from '../../src/kafka/acknowledged-send.ts';
import { KafkaClient } from '../../src/kafka/kafka-client.ts';
import { findTool } from '../deploy/external-tools.ts';
import { testLogger } from '../helpers/ferry.ts';
import { testBrokers, uniqueTopic } from '../helpers/kafka.ts';

const execFileAsync = promisify(execFile);

test('the partitions an answer leaves out are sent again, and only their records', () => {
  const sent = [
    {
      topic: 'a',
      messages: [
        { key: '1', value: 'x', partition: 0 },
        { key: '2', value: 'y', partition: 1 },
        { key: '3', value: 'z', partition: 1 },
      ],
    },
    { topic: 'b', messages: [{ key: '4', value: 'w', partition: 0 }] },
  ];
  const answer = [
    { topicName: 'a', partition: 0, errorCode: 0 },
    { topicName: 'b', partition: 1, errorCode: 0 },
  ];
  assert.deepEqual(unacknowledged(sent, answer), [
    { topic: 'a', messages: [sent[0]?.messages[1], sent[0]?.messages[2]] },
    { topic: 'b', messages: [sent[1]?.messages[0]] },
  ]);
  const all = [
    ...answer,
    { topicName: 'a', partition: 1, errorCode: 0 },
    { topicName: 'b', partition: 0, errorCode: 0 },
  ];
  assert.deepEqual(unacknowledged(sent, all), []);
});

async function kcatKeyPartitions(brokers: string, topic: string): Promise<Map<string, number>> {
  const { stdout } = await execFileAsync(
    findTool('kcat'),
    ['-C', '-b', brokers, '-t', topic, '-o', 'beginning', '-e', '-q', '-f', '%k\t%p\n'],
    { timeout: 30_000 },
  );
  const placement = new Map<string, number>();
  for (const line of stdout.split('\n')) {
    const [key, partition] = line.split('\t');
    if (key && partition !== undefined) placement.set(key, Number(partition));
  }
  return placement;
}

test('a partition the caller chose is kept, wrapped around a topic with fewer partitions', async () => {
  const assigner = new PartitionAssigner(async () => 4);
  const [assigned] = await assigner.assign([
    {
      topic: 't',
      messages: [
        { key: 'k', value: 'a', partition: 1 },
        { key: 'k', value: 'b', partition: 6 },
        { key: 'k', value: 'c' },
      ],
    },
  ]);
  const [first, second, hashed] = assigned?.messages ?? [];
  assert.equal(first?.partition, 1);
  assert.equal(second?.partition, 2, '6 modulo 4');
  const [again] = await assigner.assign([{ topic: 't', messages: [{ key: 'k', value: 'd' }] }]);
  assert.equal(hashed?.partition, again?.messages[0]?.partition, 'without one, the key decides');
});

test('ferry places keyed records where librdkafka murmur2 (Java default) places them', async (t) => {
  const brokers = testBrokers().join(',');
  const kafka = new KafkaClient({
    brokers: testBrokers(),
    clientId: 'ferry-placement-test',
    logger: testLogger(),
  });
  t.after(() => kafka.close());
  const ours = uniqueTopic('placement-ferry');
  const theirs = uniqueTopic('placement-kcat');
  await kafka.ensureTopics([
    { topic: ours, partitions: 6, replicationFactor: 1 },
    { topic: theirs, partitions: 6, replicationFactor: 1 },
  ]);
  const keys = Array.from({ length: 200 }, (_, i) => `key-${i * 7919}`);

  const producer = kafka.createProducer();
  await producer.connect();
  await producer.send(keys.map((key) => ({ topic: ours, key, value: 'v' })));
  await producer.disconnect();

  const produce = execFileAsync(
    findTool('kcat'),
    ['-P', '-b', brokers, '-t', theirs, '-K', '\t', '-X', 'partitioner=murmur2_random'],
    { timeout: 30_000 },
  );
  produce.child.stdin?.end(`${keys.map((key) => `${key}\tv`).join('\n')}\n`);
  await produce;

  const ferryPlacement = await kcatKeyPartitions(brokers, ours);
  const kcatPlacement = await kcatKeyPartitions(brokers, theirs);
  assert.equal(ferryPlacement.size, keys.length, 'every record ferry sent was written');
  assert.equal(kcatPlacement.size, keys.length);
  assert.deepEqual(ferryPlacement, kcatPlacement);
  assert.ok(new Set(ferryPlacement.values()).size === 6, 'the keys cover every partition');
});
