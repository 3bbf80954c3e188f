/**
 * What one transaction costs in requests and waits.
 * - A transaction begun right after the previous commit is answered
 *   CONCURRENT_TRANSACTIONS while the broker still writes the previous one's markers.
 *   kafkajs's transaction manager retries it after the client's `initialRetryTime` and
 *   refreshes the metadata first, so a client tuned for slow admin retries makes every
 *   such batch wait that long, and every retry costs a Metadata request.
 * - kafkajs looks the coordinator up (FindCoordinator) before every request to it.
 * These tests show both shortfalls with plain kafkajs, and that ferry's transactional
 * producers retry after milliseconds, with no metadata refresh and no lookup per request.
 */
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { Kafka, type LogEntry, logLevel, Partitioners } from 'kafkajs';
import { CLIENT_RETRY, KafkaClient, TRANSACTION_RETRY } from '../../src/kafka/kafka-client.ts';
import { createLogger } from '../../src/observability/logger.ts';
import { createTopicsAndWait, testBrokers, uniqueTopic } from '../helpers/kafka.ts';

/** kafkajs's text of CONCURRENT_TRANSACTIONS, logged with the retry's count and wait. */
const RETRY_MESSAGE = 'another concurrent operation on the same transaction';
/** ferry's debug line before it asks a busy transaction coordinator again. */
const BUSY_MESSAGE = 'still completing the previous transaction';
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

/** Requests of kafkajs's API names, counted. */
class RequestTally {
  readonly #counts = new Map<string, number>();
  add = (api: string): void => {
    this.#counts.set(api, (this.#counts.get(api) ?? 0) + 1);
  };
  count(api: string): number {
    return this.#counts.get(api) ?? 0;
  }
  toString(): string {
    return [...this.#counts].map(([api, n]) => `${api} ${n}`).join(', ');
  }
}

/** kafkajs's name of FindCoordinator (version 0 of the API was GroupCoordinator). */
const FIND_COORDINATOR = 'GroupCoordinator';
const TRANSACTIONS = 40;

test('plain kafkajs looks the coordinator up before every coordinator request, and refreshes metadata after CONCURRENT_TRANSACTIONS', async (t) => {
  const topic = await createTopic(6);
  const tally = new RequestTally();
  const kafka = new Kafka({
    brokers: testBrokers(),
    retry: TRANSACTION_RETRY,
    logLevel: logLevel.NOTHING,
  });
  const producer = kafka.producer({
    transactionalId: uniqueTopic('plain-lookups'),
    idempotent: true,
    maxInFlightRequests: 1,
    createPartitioner: Partitioners.DefaultPartitioner,
  });
  producer.on(producer.events.REQUEST, (event) => tally.add(event.payload.apiName));
  await producer.connect();
  t.after(() => producer.disconnect());
  const group = uniqueTopic('plain-lookups-group');
  let conflicts = 0;
  for (let round = 0; round < TRANSACTIONS; round++) {
    const before = tally.count('AddPartitionsToTxn');
    const transaction = await producer.transaction();
    await transaction.send({ topic, messages: records(topic, round) });
    for (let attempt = 1; ; attempt++) {
      try {
        await transaction.sendOffsets({
          consumerGroupId: group,
          topics: [{ topic, partitions: [{ partition: 0, offset: String(round + 1) }] }],
        });
        break;
      } catch (error: unknown) {
        // The group's first commit meets a coordinator still loading it; kafkajs gives
        // up on that (see sendOffsetsRetrying in src/kafka/producers.ts).
        if ((error as { type?: string }).type !== 'NOT_COORDINATOR_FOR_GROUP' || attempt > 20)
          throw error;
        await sleep(50);
      }
    }
    await transaction.commit();
    conflicts += tally.count('AddPartitionsToTxn') - before - 1;
  }
  // AddPartitionsToTxn, AddOffsetsToTxn, TxnOffsetCommit and EndTxn each look theirs up.
  assert.ok(tally.count(FIND_COORDINATOR) >= 4 * TRANSACTIONS, String(tally));
  if (conflicts > 0) {
    // Each retry of the records' AddPartitionsToTxn after CONCURRENT_TRANSACTIONS is
    // preceded by a metadata refresh.
    assert.ok(tally.count('Metadata') >= conflicts, `${conflicts} conflicts: ${tally}`);
  }
});

test("ferry's transactional producer remembers coordinators and retries CONCURRENT_TRANSACTIONS after milliseconds, without metadata refreshes", async (t) => {
  const topic = await createTopic(6);
  const retries: { attempt: number; waitMs: number }[] = [];
  // ferry logs each retry of the busy coordinator at debug.
  const lines = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString('utf8').split('\n')) {
        if (line.includes(BUSY_MESSAGE)) retries.push(JSON.parse(line));
      }
      done();
    },
  });
  const tally = new RequestTally();
  const client = new KafkaClient({
    brokers: testBrokers(),
    clientId: 'txn-retry-test',
    logger: createLogger({ level: 'debug', destination: lines }),
    onTransactionalRequest: tally.add,
  });
  t.after(() => client.close());
  const producer = client.createTransactionalProducer(uniqueTopic('ferry-txn'));
  await producer.connect();
  t.after(() => producer.disconnect());
  // A group's first offsets go to a coordinator that may still be loading it: kafkajs
  // aborts such a transaction (see sendOffsetsRetrying), ferry retries the step.
  const group = uniqueTopic('txn-retry-group');
  const metadataBefore = tally.count('Metadata');
  let round = 0;
  for (
    ;
    round < MAX_TRANSACTIONS && (round < TRANSACTIONS || retries.length < WANTED_CONFLICTS);
    round++
  ) {
    await producer.commit(records(topic, round), group, [
      { topic, partition: 0, offset: String(round + 1) },
    ]);
  }
  assert.ok(retries.length > 0, `no CONCURRENT_TRANSACTIONS in ${round} transactions`);
  for (const retry of retries.filter((r) => r.attempt === 0)) {
    assert.ok(retry.waitMs <= TRANSACTION_RETRY.initialRetryTime, `retry after ${retry.waitMs} ms`);
  }
  // One lookup per coordinator (the transaction's and the group's), and again only when
  // the cache's time is up on a slow run: not four per transaction.
  assert.ok(
    tally.count(FIND_COORDINATOR) <= 2 + Math.ceil(round / 20),
    `${round} transactions: ${tally}`,
  );
  // The busy coordinator is asked again without a metadata refresh in between. A Produce
  // that kafkajs had to repeat (a leader not yet known for a fresh topic, a timeout on a
  // loaded machine) refreshes the metadata first: those refreshes are not the coordinator's.
  const produceRetries = tally.count('Produce') - round;
  assert.ok(
    tally.count('Metadata') - metadataBefore <= 2 + produceRetries,
    `${round} transactions: ${tally}`,
  );
  assert.equal(tally.count('EndTxn'), round, String(tally));
  assert.ok(tally.count('AddOffsetsToTxn') >= round + retries.length, String(tally));
});
