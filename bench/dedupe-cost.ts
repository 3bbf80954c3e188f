/**
 * What duplicate suppression costs besides throughput: heap per id kept, and the time a
 * takeover spends reading a partition's dedupe records back, on a real broker.
 *
 *   node --expose-gc bench/dedupe-cost.ts [--ids=1000000] [--brokers=127.0.0.1:9092]
 *
 * The ids are written as ferry writes them (src/pipeline/dedupe-records.ts: a sync send
 * with its msg_id) to partition 0 of a fresh topic, then read back through the Kafka
 * adapter and the store, as a takeover does (src/pipeline/dedupe.ts).
 */
import { randomUUID } from 'node:crypto';
import { KafkaClient } from '../src/kafka/kafka-client.ts';
import { createLogger } from '../src/observability/logger.ts';
import { createMetrics } from '../src/observability/metrics.ts';
import { Dedupe } from '../src/pipeline/dedupe.ts';
import { dedupeRecord, firstCompletion } from '../src/pipeline/dedupe-records.ts';
import { DedupeStore, type FirstCompletion } from '../src/pipeline/dedupe-store.ts';

const arg = (name: string, fallback: string) =>
  process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3) ?? fallback;
const ids = Number(arg('ids', '1000000'));
const brokers = arg('brokers', process.env.FERRY_BENCH_KAFKA_BROKERS ?? '127.0.0.1:9092');
const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error('run with node --expose-gc');

/** A first completion as a sync send leaves it, for id `n`. */
function firstOf(n: number, atMs: number): FirstCompletion {
  const first = firstCompletion(
    {
      kind: 'item',
      item: { success: true, data: { id: n, msg_id: String(1_767_225_600_000_000 + n), parts: 1 } },
      attempts: 1,
    },
    { partition: 0, offset: String(n), completedAt: new Date(atMs).toISOString() },
  );
  if (!first) throw new Error('a send is a first completion');
  return first;
}

function heapPerId(): number {
  gc?.();
  const before = process.memoryUsage().heapUsed;
  const store = new DedupeStore({ windowMs: 86_400_000, maxIds: ids });
  const now = Date.now();
  for (let n = 0; n < ids; n++) store.committed(String(1_000_000 + n), firstOf(n, now));
  gc?.();
  const bytes = process.memoryUsage().heapUsed - before;
  if (store.size !== ids) throw new Error(`kept ${store.size} of ${ids}`);
  return bytes / ids;
}

async function restoreSeconds(): Promise<{ writeS: number; readS: number; kept: number }> {
  const logger = createLogger({ level: 'silent' });
  const kafka = new KafkaClient({ brokers: [brokers], clientId: 'ferry-bench-dedupe', logger });
  const topic = `bench.dedupe.${randomUUID().slice(0, 8)}`;
  try {
    await kafka.ensureTopics([{ topic, partitions: 1, replicationFactor: 1 }]);
    const producer = kafka.createProducer();
    await producer.connect();
    const writeStarted = performance.now();
    const now = Date.now();
    const chunk = 20_000;
    for (let from = 0; from < ids; from += chunk) {
      const records = [];
      for (let n = from; n < Math.min(ids, from + chunk); n++) {
        records.push(dedupeRecord(topic, String(1_000_000 + n), firstOf(n, now)));
      }
      await producer.send(records);
    }
    const writeS = (performance.now() - writeStarted) / 1000;
    await producer.disconnect();
    const store = new DedupeStore({ windowMs: 86_400_000, maxIds: ids });
    const dedupe = new Dedupe({
      settings: { topic, windowMs: 86_400_000, maxIds: ids },
      kafka,
      storeOf: () => store,
      metrics: createMetrics(),
      logger,
    });
    const readStarted = performance.now();
    await dedupe.restore(0);
    const readS = (performance.now() - readStarted) / 1000;
    return { writeS, readS, kept: store.size };
  } finally {
    await kafka.close();
  }
}

const perId = heapPerId();
console.log(
  `heap: ${perId.toFixed(0)} bytes per id kept (${ids.toLocaleString('en')} ids; ${Math.round((1024 * 1024) / perId).toLocaleString('en')} ids per MiB)`,
);
const restore = await restoreSeconds();
console.log(
  `restore: ${restore.kept.toLocaleString('en')} ids read back in ${restore.readS.toFixed(1)} s (${(restore.readS / (ids / 1_000_000)).toFixed(1)} s per million; written in ${restore.writeS.toFixed(1)} s)`,
);
