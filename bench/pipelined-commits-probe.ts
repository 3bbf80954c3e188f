/**
 * Probe: does a second transactional id per partition take the commit wait off a
 * command's path? Batches become ready on each of `ids` partitions at a steady pace; each
 * partition commits them in order with their group offset, read at read_committed.
 * - `one`: one id per partition, as ferry commits today: the oldest ready batch and
 *   every ready batch behind it in one transaction, the next transaction begun at least
 *   `gap` ms after the previous one ended;
 * - `two`: two ids per partition, alternating: a transaction begins as soon as the one
 *   before it has its offsets and records written (no gap), and ends (EndTxn) only after
 *   the one before it ended. Each id's transaction then begins long after its own last
 *   EndTxn, so it meets no markers still being written.
 * Readable latency is from a batch being ready until the reader had its record.
 *
 * `node bench/pipelined-commits-probe.ts <broker> <seconds> <batch interval ms> <records per batch> [modes]`
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { Kafka, logLevel, type Producer, type Transaction } from 'kafkajs';
import { cacheCoordinators } from '../src/kafka/coordinator-cache.ts';
import { BUSY_RETRIES, busyRetryWaitMs, TRANSACTION_RETRY } from '../src/kafka/producers.ts';
import { createTopicsAndWait } from './bench-context.ts';
import { quantile } from './stats.ts';
import { startReader } from './transaction-ceilings.ts';

const [brokers = '127.0.0.1:9092', secondsArg = '15', intervalArg = '5', perBatchArg = '4'] =
  process.argv.slice(2);
const modes = (process.argv[6] ?? 'one,two,one,two').split(',');
const ids = 6;
const seconds = Number(secondsArg);
const intervalMs = Number(intervalArg);
const perBatch = Number(perBatchArg);
const gapMs = 5;
/** CONCURRENT_TRANSACTIONS answers retried in the current run. */
let busy = 0;

interface Batch {
  readonly readyAt: number;
  readonly offset: number;
}

const kafka = new Kafka({
  clientId: 'probe',
  brokers: [brokers],
  logLevel: logLevel.NOTHING,
  retry: TRANSACTION_RETRY,
});
cacheCoordinators(kafka);
const plain = new Kafka({
  clientId: 'probe-admin',
  brokers: [brokers],
  logLevel: logLevel.NOTHING,
});
const admin = plain.admin();
await admin.connect();

async function producerFor(transactionalId: string, count: () => void): Promise<Producer> {
  const producer = kafka.producer({ transactionalId, idempotent: true, maxInFlightRequests: 1 });
  producer.on(producer.events.REQUEST, count);
  await producer.connect();
  const t = await producer.transaction();
  await t.abort();
  return producer;
}

async function offsetsRetrying(
  t: Transaction,
  groupId: string,
  topic: string,
  p: number,
  offset: number,
) {
  for (let attempt = 0; ; attempt++) {
    try {
      return await t.sendOffsets({
        consumerGroupId: groupId,
        topics: [{ topic, partitions: [{ partition: p, offset: String(offset) }] }],
      });
    } catch (error: unknown) {
      if (
        (error as { type?: string }).type !== 'CONCURRENT_TRANSACTIONS' ||
        attempt >= BUSY_RETRIES
      )
        throw error;
      busy += 1;
      await sleep(busyRetryWaitMs(attempt));
    }
  }
}

function records(topic: string, p: number, batches: readonly Batch[]) {
  return [
    {
      topic,
      messages: batches.flatMap((b) =>
        Array.from({ length: perBatch }, (_, i) => ({
          key: `k${p}-${b.offset}-${i}`,
          value: `{"at":${b.readyAt},"pad":"${'x'.repeat(200)}"}`,
          partition: p,
        })),
      ),
    },
  ];
}

async function runMode(mode: string) {
  const topic = `probe.${mode}.${Date.now()}`;
  const offsetsTopic = `${topic}.in`;
  const groupId = `${topic}.group`;
  await createTopicsAndWait(admin, brokers, [
    { topic, numPartitions: ids, replicationFactor: 1 },
    { topic: offsetsTopic, numPartitions: ids, replicationFactor: 1 },
  ]);
  let requests = 0;
  let transactions = 0;
  const count = () => {
    requests += 1;
  };
  const producers = await Promise.all(
    Array.from({ length: ids }, async (_, p) =>
      mode === 'two'
        ? [await producerFor(`${topic}-${p}-a`, count), await producerFor(`${topic}-${p}-b`, count)]
        : [await producerFor(`${topic}-${p}`, count)],
    ),
  );
  const reader = await startReader(plain, topic, 5);
  const delays = reader.delays;
  requests = 0;
  busy = 0;
  const endAt = Date.now() + seconds * 1000;
  let produced = 0;
  await Promise.all(
    producers.map(async (pair, p) => {
      const queue: Batch[] = [];
      let offset = 0;
      let wake: () => void = () => undefined;
      const arrivals = (async () => {
        let next = performance.now() + (p * intervalMs) / ids;
        while (Date.now() < endAt) {
          await sleep(Math.max(0, next - performance.now()));
          next += intervalMs;
          queue.push({ readyAt: Date.now(), offset: ++offset });
          produced += perBatch;
          wake();
        }
      })();
      const waitForBatch = () =>
        queue.length > 0
          ? Promise.resolve()
          : new Promise<void>((r) => {
              wake = r;
            });
      let lastEnd = Number.NEGATIVE_INFINITY;
      let arrivalsDone = false;
      void arrivals.then(() => {
        arrivalsDone = true;
        wake();
      });
      if (mode === 'one') {
        const producer = pair[0] as Producer;
        while (!(arrivalsDone && queue.length === 0)) {
          await waitForBatch();
          if (queue.length === 0) continue;
          const since = performance.now() - lastEnd;
          if (since < gapMs) await sleep(gapMs - since);
          const batches = queue.splice(0);
          const t = await producer.transaction();
          await offsetsRetrying(t, groupId, offsetsTopic, p, (batches.at(-1) as Batch).offset);
          await t.sendBatch({ topicMessages: records(topic, p, batches), acks: -1 });
          await t.commit();
          transactions += 1;
          lastEnd = performance.now();
        }
      } else {
        let turn = 0;
        let previousEnded: Promise<void> = Promise.resolve();
        const lastOfProducer: Promise<void>[] = [Promise.resolve(), Promise.resolve()];
        const inFlight: Promise<void>[] = [];
        while (!(arrivalsDone && queue.length === 0)) {
          await waitForBatch();
          if (queue.length === 0) continue;
          const index = turn % 2;
          turn += 1;
          const producer = pair[index] as Producer;
          // This id's previous transaction must have ended before it begins another.
          await lastOfProducer[index];
          const batches = queue.splice(0);
          const t = await producer.transaction();
          await offsetsRetrying(t, groupId, offsetsTopic, p, (batches.at(-1) as Batch).offset);
          await t.sendBatch({ topicMessages: records(topic, p, batches), acks: -1 });
          // Written: the next transaction may begin; this one ends after the one before.
          const before = previousEnded;
          const ended = before.then(async () => {
            await t.commit();
            transactions += 1;
          });
          previousEnded = ended;
          lastOfProducer[index] = ended;
          inFlight.push(ended);
        }
        await Promise.all(inFlight);
      }
      await arrivals;
    }),
  );
  const deadline = Date.now() + 10_000;
  while (delays.length < produced && Date.now() < deadline) await sleep(50);
  await reader.stop();
  await Promise.all(producers.flat().map((p) => p.disconnect()));
  const sorted = [...delays].sort((a, b) => a - b);
  process.stdout.write(
    `${mode.padEnd(4)} records ${produced} read ${delays.length}  readable p50 ${quantile(sorted, 0.5).toFixed(0)} p90 ${quantile(sorted, 0.9).toFixed(0)} p99 ${quantile(sorted, 0.99).toFixed(0)} max ${sorted.at(-1)} ms; txn ${transactions} (${(produced / perBatch / transactions).toFixed(2)} batches/txn), ${(requests / transactions).toFixed(2)} req/txn, busy retries ${busy}\n`,
  );
  await admin.deleteTopics({ topics: [topic, offsetsTopic] }).catch(() => undefined);
}

for (const mode of modes) await runMode(mode);
await admin.disconnect();
