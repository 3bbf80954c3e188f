/**
 * Reading a partition without a group (src/kafka/partition-reader.ts), as the control
 * topic is read at start: every committed record from an offset up to an end, in order;
 * an aborted transaction's records and its markers are passed over; a range past what
 * one fetch answers (1 MiB) is read in several.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Kafka, logLevel } from '../../src/kafka/kafkajs.ts';
import { readPartition } from '../../src/kafka/partition-reader.ts';
import { createTopicsAndWait, testBrokers, uniqueTopic } from '../helpers/kafka.ts';

const kafka = new Kafka({
  clientId: 'partition-reader-test',
  brokers: testBrokers(),
  logLevel: logLevel.NOTHING,
});

async function read(topic: string, from: number, end: number) {
  const records: { offset: number; key: string; value: string | null }[] = [];
  const next = await readPartition(kafka, topic, 0, from, end, (r) =>
    records.push({
      offset: r.offset,
      key: r.key?.toString() ?? '',
      value: r.value === null ? null : r.value.toString(),
    }),
  );
  return { records, next };
}

test('every committed record in the range, in order; aborted ones and markers passed over', async (t) => {
  const topic = uniqueTopic('partition-reader');
  const admin = kafka.admin();
  await admin.connect();
  t.after(() => admin.disconnect());
  await createTopicsAndWait(admin, testBrokers(), [{ topic, numPartitions: 1 }]);
  const plain = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
  const transactional = kafka.producer({
    transactionalId: `${topic}-tx`,
    idempotent: true,
    maxInFlightRequests: 1,
  });
  await plain.connect();
  await transactional.connect();
  t.after(() => plain.disconnect());
  t.after(() => transactional.disconnect());
  await plain.send({
    topic,
    acks: -1,
    messages: [
      { key: 'a', value: '1' },
      { key: 'b', value: '2' },
    ],
  });
  const aborted = await transactional.transaction();
  await aborted.send({ topic, acks: -1, messages: [{ key: 'x', value: 'aborted' }] });
  await aborted.abort();
  // A tombstone and, after it, enough bytes that one fetch cannot answer them all.
  await plain.send({ topic, acks: -1, messages: [{ key: 'c', value: null }] });
  const big = 'v'.repeat(300 * 1024);
  for (let i = 0; i < 5; i++) {
    await plain.send({ topic, acks: -1, messages: [{ key: `big-${i}`, value: big }] });
  }
  const end = Number((await admin.fetchTopicOffsets(topic))[0]?.high);

  const all = await read(topic, 0, end);
  assert.deepEqual(
    all.records.map((r) => r.key),
    ['a', 'b', 'c', 'big-0', 'big-1', 'big-2', 'big-3', 'big-4'],
  );
  assert.ok(
    all.records.every((r, i, list) => i === 0 || r.offset > (list[i - 1]?.offset ?? -1)),
    'in offset order',
  );
  assert.equal(all.records.find((r) => r.key === 'c')?.value, null, 'a tombstone stays null');
  assert.ok(all.next >= end);

  const tail = await read(topic, 2, end);
  assert.deepEqual(
    tail.records.map((r) => r.key),
    ['c', 'big-0', 'big-1', 'big-2', 'big-3', 'big-4'],
    'from offset 2: the aborted record and its marker are passed over',
  );
  assert.deepEqual((await read(topic, end, end)).records, []);
});

test('a read up to an end stops there: records past it (committed after the end was taken) are left for the next read', async (t) => {
  const topic = uniqueTopic('partition-reader-end');
  const admin = kafka.admin();
  await admin.connect();
  t.after(() => admin.disconnect());
  await createTopicsAndWait(admin, testBrokers(), [{ topic, numPartitions: 1 }]);
  const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
  await producer.connect();
  t.after(() => producer.disconnect());
  await producer.send({
    topic,
    acks: -1,
    messages: ['a', 'b', 'c', 'd', 'e'].map((key) => ({ key, value: key })),
  });
  // One fetch from 0 answers all five; the reader was asked for two.
  const first = await read(topic, 0, 2);
  assert.deepEqual(
    first.records.map((r) => r.key),
    ['a', 'b'],
  );
  assert.equal(first.next, 2, 'the next read begins at the end, not past what it fetched');
  const rest = await read(topic, first.next, 5);
  assert.deepEqual(
    rest.records.map((r) => r.key),
    ['c', 'd', 'e'],
  );
  assert.equal(rest.next, 5);
});
