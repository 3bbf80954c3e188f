/**
 * What final status tracking costs in memory and at a takeover: heap per message waiting
 * for its final status, and the time a takeover spends reading a partition's tracking
 * records back, on a real broker.
 *
 *   node --expose-gc bench/tracking-cost.ts [--messages=1000000] [--brokers=127.0.0.1:9092]
 *
 * The records are written as a result transaction writes them
 * (src/tracking/tracking-records.ts: a sync sms with its msg_id) to partition 0 of a fresh
 * topic, then read back through the Kafka adapter into the partition's tracking state, as
 * a takeover does (src/tracking/status-tracker.ts).
 */
import { randomUUID } from 'node:crypto';
import { KafkaClient } from '../src/kafka/kafka-client.ts';
import { createLogger } from '../src/observability/logger.ts';
import {
  readTrackingRecord,
  type SentMessage,
  sentRecord,
} from '../src/tracking/tracking-records.ts';
import { TrackingState } from '../src/tracking/tracking-state.ts';

const arg = (name: string, fallback: string) =>
  process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3) ?? fallback;
const messages = Number(arg('messages', '1000000'));
const brokers = arg('brokers', process.env.FERRY_BENCH_KAFKA_BROKERS ?? '127.0.0.1:9092');
const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error('run with node --expose-gc');

const limits = { pollAfterMs: 600_000, giveUpAfterMs: 172_800_000, orphanAfterMs: 600_000 };

/** A message as a sync sms send leaves it, for id `n`. */
function sentOf(n: number, sentAt: string): SentMessage {
  const id = String(1_000_000 + n);
  return {
    id,
    msgId: String(1_767_225_600_000_000 + n),
    key: `id:${id}`,
    type: 'sms',
    sentAt,
    command: { topic: 'ferry.commands', partition: 0, offset: String(n) },
    lookup: true,
  };
}

/** Heap per message waiting, as a takeover leaves them: parsed from their records. */
function heapPerMessage(): number {
  const sentAt = new Date().toISOString();
  const records = [];
  for (let n = 0; n < messages; n++) {
    const record = sentRecord('t', 0, sentOf(n, sentAt));
    records.push({
      key: Buffer.from(String(record.key)),
      value: Buffer.from(String(record.value)),
    });
  }
  gc?.();
  const before = process.memoryUsage().heapUsed;
  const state = new TrackingState(limits);
  for (const { key, value } of records) {
    const read = readTrackingRecord(key, value);
    if (read?.kind === 'sent') state.sentRead(read.message);
  }
  records.length = 0;
  gc?.();
  const bytes = process.memoryUsage().heapUsed - before;
  if (state.pending !== messages) throw new Error(`kept ${state.pending} of ${messages}`);
  return bytes / messages;
}

async function restoreSeconds(): Promise<{ writeS: number; readS: number; kept: number }> {
  const logger = createLogger({ level: 'silent' });
  const kafka = new KafkaClient({ brokers: [brokers], clientId: 'ferry-bench-tracking', logger });
  const topic = `bench.tracking.${randomUUID().slice(0, 8)}`;
  const reader = kafka.openTopicReader(topic);
  try {
    await kafka.ensureTopics([{ topic, partitions: 1, replicationFactor: 1 }]);
    const producer = kafka.createProducer();
    await producer.connect();
    const writeStarted = performance.now();
    const sentAt = new Date().toISOString();
    const chunk = 20_000;
    for (let from = 0; from < messages; from += chunk) {
      const records = [];
      for (let n = from; n < Math.min(messages, from + chunk); n++) {
        records.push(sentRecord(topic, 0, sentOf(n, sentAt)));
      }
      await producer.send(records);
    }
    const writeS = (performance.now() - writeStarted) / 1000;
    await producer.disconnect();
    const state = new TrackingState(limits);
    const readStarted = performance.now();
    await reader.readOn(0, '0', (stored) => {
      const read = readTrackingRecord(stored.key, stored.value);
      if (read?.kind === 'sent') state.sentRead(read.message);
    });
    const readS = (performance.now() - readStarted) / 1000;
    return { writeS, readS, kept: state.pending };
  } finally {
    await reader.close();
    await kafka.close();
  }
}

const perMessage = heapPerMessage();
console.log(
  `heap: ${perMessage.toFixed(0)} bytes per message awaiting its final status (${messages.toLocaleString('en')} messages; ${Math.round((1024 * 1024) / perMessage).toLocaleString('en')} per MiB)`,
);
const restore = await restoreSeconds();
console.log(
  `restore: ${restore.kept.toLocaleString('en')} messages read back in ${restore.readS.toFixed(1)} s (${(restore.readS / (messages / 1_000_000)).toFixed(1)} s per million; written in ${restore.writeS.toFixed(1)} s)`,
);
