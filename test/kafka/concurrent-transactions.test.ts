/**
 * A transaction begun right after the previous commit is answered CONCURRENT_TRANSACTIONS
 * while the broker still writes the previous one's markers. kafkajs's transaction manager
 * retries it after the client's `initialRetryTime` (and refreshes the metadata), so a
 * client tuned for slow admin retries makes every such batch wait that long. These tests show the shortfall with plain kafkajs, and that ferry's
 * transactional producers retry after milliseconds.
 */
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { test } from 'node:test';
import { Kafka, type LogEntry, logLevel, Partitioners } from 'kafkajs';
import { CLIENT_RETRY, KafkaClient, TRANSACTION_RETRY } from '../../src/kafka/kafka-client.ts';
import { createLogger } from '../../src/observability/logger.ts';
import { createTopicsAndWait, testBrokers, uniqueTopic } from '../helpers/kafka.ts';

/** kafkajs's text of CONCURRENT_TRANSACTIONS, logged with the retry's count and wait. */
const RETRY_MESSAGE = 'another concurrent operation on the same transaction';
/** Enough back-to-back transactions for a few to meet the previous one's markers. */
const MAX_TRANSACTIONS = 200;
const WANTED_CONFLICTS = 3;

interface Retry {
  readonly retryCount: number;
  readonly retryTime: number;
}

async function createTopic(partitions: number): Promise<string> {
  const topic = uniqueTopic('txn-retry');
  const kafka = new Kafka({ brokers: testBrokers(), logLevel: logLevel.NOTHING });
  const admin = kafka.admin();
  await admin.connect();
  try {
    await createTopicsAndWait(admin, testBrokers(), [{ topic, numPartitions: partitions }]);
  } finally {
    await admin.disconnect();
  }
  return topic;
}

function records(topic: string, round: number) {
  return Array.from({ length: 60 }, (_, i) => ({
    topic,
    key: `k${round}-${i}`,
    value: `{"round":${round},"i":${i}}`,
  }));
}

test('plain kafkajs waits the cluster retry time (300 ms) on CONCURRENT_TRANSACTIONS', async (t) => {
  const topic = await createTopic(6);
  const retries: Retry[] = [];
  const kafka = new Kafka({
    brokers: testBrokers(),
    retry: CLIENT_RETRY,
    logLevel: logLevel.DEBUG,
    logCreator:
      () =>
      ({ log }: LogEntry) => {
        if (log.message.includes(RETRY_MESSAGE)) retries.push(log as unknown as Retry);
      },
  });
  const producer = kafka.producer({
    transactionalId: uniqueTopic('plain-txn'),
    idempotent: true,
    maxInFlightRequests: 1,
    createPartitioner: Partitioners.DefaultPartitioner,
  });
  await producer.connect();
  t.after(() => producer.disconnect());
  for (let round = 0; round < MAX_TRANSACTIONS && retries.length < WANTED_CONFLICTS; round++) {
    const transaction = await producer.transaction();
    await transaction.send({ topic, messages: records(topic, round) });
    await transaction.commit();
  }
  assert.ok(retries.length > 0, `no CONCURRENT_TRANSACTIONS in ${MAX_TRANSACTIONS} transactions`);
  const first = retries.filter((r) => r.retryCount === 0);
  assert.ok(first.length > 0);
  // kafkajs randomises each wait by ±20 %.
  for (const retry of first) assert.ok(retry.retryTime >= 240, `retry after ${retry.retryTime} ms`);
});

test("ferry's transactional producer retries CONCURRENT_TRANSACTIONS after milliseconds", async (t) => {
  const topic = await createTopic(6);
  const retries: Retry[] = [];
  // ferry logs kafkajs's line about the expected conflict at debug.
  const lines = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString('utf8').split('\n')) {
        if (!line.includes(RETRY_MESSAGE)) continue;
        retries.push(JSON.parse(line) as Retry);
      }
      done();
    },
  });
  const client = new KafkaClient({
    brokers: testBrokers(),
    clientId: 'txn-retry-test',
    logger: createLogger({ level: 'debug', destination: lines }),
  });
  t.after(() => client.close());
  const producer = client.createTransactionalProducer(uniqueTopic('ferry-txn'));
  await producer.connect();
  t.after(() => producer.disconnect());
  // A group's first offsets go to a coordinator that may still be loading it: kafkajs
  // aborts such a transaction (see sendOffsetsRetryingCoordinator), ferry retries the step.
  const group = uniqueTopic('txn-retry-group');
  for (let round = 0; round < MAX_TRANSACTIONS && retries.length < WANTED_CONFLICTS; round++) {
    await producer.commit(records(topic, round), group, [
      { topic, partition: 0, offset: String(round + 1) },
    ]);
  }
  assert.ok(retries.length > 0, `no CONCURRENT_TRANSACTIONS in ${MAX_TRANSACTIONS} transactions`);
  // kafkajs draws the first wait within ±20 % of initialRetryTime and rounds it up.
  const limit = Math.ceil(TRANSACTION_RETRY.initialRetryTime * 1.2);
  for (const retry of retries.filter((r) => r.retryCount === 0)) {
    assert.ok(retry.retryTime <= limit, `retry after ${retry.retryTime} ms`);
  }
});
