/**
 * The chaos run's own Kafka access (kafkajs directly, as tools/kafka does): topic
 * set-up, producing the planned records, the group's lag, reading a topic back
 * at read_committed to count what ferry committed, and waiting for final statuses.
 */
import { type Admin, Kafka, logLevel, type Producer } from 'kafkajs';
import { PartitionAssigner, sendAcknowledged } from '../../src/kafka/acknowledged-send.ts';
import { registerCompressionCodecs } from '../../src/kafka/compression.ts';
import { createTopicsAndWait } from '../../src/kafka/topic-leaders.ts';
import type { PlannedRecord } from './command-mix.ts';
import { finalStatusMessageKey, messagesSent, recordValue } from './verify-run.ts';

function client(brokers: string, clientId: string): Kafka {
  return new Kafka({
    clientId,
    brokers: brokers.split(','),
    logLevel: logLevel.NOTHING,
    connectionTimeout: 3000,
    // Retries at most 2 s apart: after a leader change, kafkajs's default backoff (up to
    // 30 s between tries) would hold the run's producer long after the new leader is there.
    retry: { initialRetryTime: 300, maxRetryTime: 2000, retries: 40 },
  });
}

/** Creates the topics with `partitions` partitions (and topic configs), before ferry starts. */
export async function createTopics(
  brokers: string,
  topics: readonly string[],
  partitions: number,
  config: Readonly<Record<string, string>> = {},
  replicationFactor = 1,
): Promise<void> {
  const admin = client(brokers, 'ferry-chaos-admin').admin();
  await admin.connect();
  try {
    // kafkajs's waitForLeaders gives up when the broker it asks has not heard of a new
    // topic yet (UNKNOWN_TOPIC_OR_PARTITION on a cluster); the loop below asks again.
    // Every broker must know them: kafkajs (ferry's subscribe, a first send) asks any.
    await createTopicsAndWait(
      admin,
      { clientId: 'ferry-chaos-probe', brokers: brokers.split(',') },
      topics.map((topic) => ({
        topic,
        numPartitions: partitions,
        replicationFactor,
        configEntries: Object.entries(config).map(([name, value]) => ({ name, value })),
      })),
    );
  } finally {
    await admin.disconnect();
  }
}

const LARGE_VALUE_BYTES = 64 * 1024;

/**
 * Produces planned records (idempotent, acks from all in-sync replicas), each
 * partition checked as ferry's producers do (src/kafka/acknowledged-send.ts): on a
 * cluster, kafkajs alone can drop the records of a partition whose leader was killed.
 */
export class PlannedProducer {
  readonly #producer: Producer;
  readonly #admin: Admin;
  readonly #partitionCounts = new Map<string, number>();
  readonly #partitions = new PartitionAssigner((topic) => this.#partitionCount(topic));
  #connected = false;
  /** Sends of partitions kafkajs's answer left out (after a leader change), for the report. */
  resends = 0;

  constructor(brokers: string) {
    const kafka = client(brokers, 'ferry-chaos-producer');
    this.#producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
    this.#admin = kafka.admin();
  }

  async #partitionCount(topic: string): Promise<number> {
    const known = this.#partitionCounts.get(topic);
    if (known !== undefined) return known;
    const { topics } = await this.#admin.fetchTopicMetadata({ topics: [topic] });
    const count = topics[0]?.partitions.length ?? 0;
    if (count === 0) throw new Error(`no partitions of ${topic} in the metadata`);
    this.#partitionCounts.set(topic, count);
    return count;
  }

  async send(topic: string, records: readonly PlannedRecord[]): Promise<void> {
    if (!this.#connected) {
      await this.#producer.connect();
      await this.#admin.connect();
      this.#connected = true;
    }
    // A record batch must stay under the topic's 1 MB limit: large values go one per request.
    const large = records.filter((r) => (r.value?.length ?? 0) > LARGE_VALUE_BYTES);
    const small = records.filter((r) => (r.value?.length ?? 0) <= LARGE_VALUE_BYTES);
    for (const group of [small, ...large.map((r) => [r])]) {
      if (group.length > 0) await this.#sendGroup(topic, group);
    }
  }

  async #sendGroup(topic: string, records: readonly PlannedRecord[]): Promise<void> {
    const messages = records.map((r) => ({
      key: r.key,
      value: r.value,
      ...(r.headers ? { headers: { ...r.headers } } : {}),
    }));
    await sendAcknowledged(
      (batch) => this.#producer.sendBatch(batch),
      await this.#partitions.assign([{ topic, messages }]),
      { acks: -1 },
      () => {
        this.resends += 1;
      },
    );
  }

  async close(): Promise<void> {
    if (this.#connected) {
      await this.#producer.disconnect().catch(() => undefined);
      await this.#admin.disconnect().catch(() => undefined);
    }
    this.#connected = false;
  }
}

/**
 * Tries to produce one record and reports what the producer or broker said; used
 * to show that a value past the topic's max.message.bytes never reaches ferry.
 */
export async function tryProduceOnce(
  brokers: string,
  topic: string,
  key: string,
  value: Buffer,
): Promise<{ accepted: boolean; error?: string }> {
  const producer = new Kafka({
    clientId: 'ferry-chaos-oversize',
    brokers: brokers.split(','),
    logLevel: logLevel.NOTHING,
    retry: { retries: 1 },
  }).producer();
  await producer.connect();
  try {
    await producer.send({ topic, acks: -1, messages: [{ key, value }] });
    return { accepted: true };
  } catch (error: unknown) {
    return { accepted: false, error: error instanceof Error ? error.message : String(error) };
  } finally {
    await producer.disconnect().catch(() => undefined);
  }
}

/**
 * The group's total lag on `topic` (end offset minus committed offset, summed over
 * partitions; a partition without a committed offset counts in full), or the
 * error text when Kafka does not answer.
 */
export async function groupLag(
  brokers: string,
  groupId: string,
  topic: string,
): Promise<number | string> {
  const admin = client(brokers, 'ferry-chaos-lag').admin();
  try {
    await admin.connect();
    const [ends, committed] = await Promise.all([
      admin.fetchTopicOffsets(topic),
      admin.fetchOffsets({ groupId, topics: [topic] }),
    ]);
    const byPartition = new Map(
      (committed[0]?.partitions ?? []).map((p) => [p.partition, BigInt(p.offset)]),
    );
    let lag = 0n;
    for (const end of ends) {
      const at = byPartition.get(end.partition) ?? -1n;
      const from = at < 0n ? BigInt(end.low) : at;
      lag += BigInt(end.high) - from;
    }
    return Number(lag);
  } catch (error: unknown) {
    return error instanceof Error ? error.message : String(error);
  } finally {
    await admin.disconnect().catch(() => undefined);
  }
}

/** Records in a topic without transactions (end minus start, summed over partitions). */
/**
 * The keys of the records of `topic` a read_committed reader sees, read until `expected`
 * are there and then a few seconds more (a record written twice is there twice). Offsets
 * would overcount: aborted transactions (ferry's start-up access check aborts one per
 * topic it writes) and their markers take offsets too.
 */
export async function recordKeys(
  brokers: string,
  topic: string,
  expected: number,
): Promise<string[]> {
  // kcat's batches come in every codec; plain kafkajs reads only gzip.
  registerCompressionCodecs();
  const records = await readTopic(brokers, topic, (read) => read.length >= expected, {
    timeoutMs: 60_000,
    settleMs: 2_000,
  }).catch(() => readTopic(brokers, topic, () => true, { timeoutMs: 5_000, settleMs: 3_000 }));
  return records.map((record) => record.key);
}

export interface ReadBack {
  readonly key: string;
  readonly value: Buffer | null;
  readonly headers: Record<string, string>;
}

/**
 * Reads a topic from the start at read_committed until `enough(records)` holds,
 * then `settleMs` more so a record committed twice would be read as well.
 * @throws Error after `timeoutMs` when `enough` never held.
 */
export async function readTopic(
  brokers: string,
  topic: string,
  enough: (records: readonly ReadBack[]) => boolean,
  { timeoutMs, settleMs }: { timeoutMs: number; settleMs: number },
): Promise<ReadBack[]> {
  const consumer = client(brokers, 'ferry-chaos-reader').consumer({
    groupId: `ferry-chaos-reader-${process.pid}-${Date.now()}-${Math.random()}`,
    readUncommitted: false,
    maxBytesPerPartition: 4 * 1024 * 1024,
    maxWaitTimeInMs: 200,
  });
  const records: ReadBack[] = [];
  let finish: () => void = () => undefined;
  const done = new Promise<void>((resolve) => {
    finish = resolve;
  });
  if (enough(records)) finish();
  await consumer.connect();
  let timer: NodeJS.Timeout | undefined;
  try {
    await consumer.subscribe({ topic, fromBeginning: true });
    await consumer.run({
      autoCommit: false,
      eachBatch: async ({ batch }) => {
        for (const message of batch.messages) {
          const headers: Record<string, string> = {};
          for (const [name, value] of Object.entries(message.headers ?? {})) {
            if (value !== undefined)
              headers[name] = String(Array.isArray(value) ? value[0] : value);
          }
          records.push({ key: message.key?.toString('utf8') ?? '', value: message.value, headers });
        }
        if (enough(records)) finish();
      },
    });
    await Promise.race([
      done,
      new Promise<never>((_, reject) => {
        timer = setTimeout(
          () =>
            reject(
              new Error(`reading ${topic}: only ${records.length} records after ${timeoutMs} ms`),
            ),
          timeoutMs,
        );
      }),
    ]);
    await new Promise((r) => setTimeout(r, settleMs));
  } finally {
    clearTimeout(timer);
    await consumer.disconnect().catch(() => undefined);
  }
  return [...records];
}

/**
 * With final status tracking, while the replicas still run: reads the results (until
 * `resultKeys` distinct keys), then the final status topic until every message they say
 * was sent and ferry can look up has its event, or until `timeoutMs` from the call.
 * Returns when the last came (undefined: some never did) and how many events were read,
 * so a reading after the replicas stopped knows how many to wait for.
 */
export async function awaitFinalStatuses(
  brokers: string,
  topics: { readonly results: string; readonly final: string },
  resultKeys: number,
  timeoutMs: number,
  log: (line: string) => void,
): Promise<{ completedAt: number | undefined; events: number }> {
  const deadline = Date.now() + timeoutMs;
  const results = await readTopic(
    brokers,
    topics.results,
    (records) => new Set(records.map((r) => r.key)).size >= resultKeys,
    { timeoutMs: Math.min(60_000, timeoutMs), settleMs: 0 },
  ).catch(() =>
    readTopic(brokers, topics.results, () => true, { timeoutMs: 5_000, settleMs: 5_000 }),
  );
  const awaited = new Set(
    messagesSent(results)
      .filter((m) => m.lookedUp)
      .map((m) => m.messageKey),
  );
  const total = awaited.size;
  let events = 0;
  let lastLog = Date.now();
  let completedAt: number | undefined;
  await readTopic(
    brokers,
    topics.final,
    (records) => {
      for (; events < records.length; events += 1) {
        const key = finalStatusMessageKey(recordValue(records[events] as ReadBack));
        if (key !== undefined) awaited.delete(key);
      }
      if (Date.now() - lastLog > 10_000) {
        lastLog = Date.now();
        log(`final statuses: ${total - awaited.size} of ${total} messages sent`);
      }
      if (awaited.size === 0) completedAt ??= Date.now();
      return awaited.size === 0;
    },
    { timeoutMs: Math.max(1_000, deadline - Date.now()), settleMs: 0 },
  ).catch(() => undefined);
  log(
    completedAt === undefined
      ? `final statuses: ${awaited.size} of ${total} messages sent still without their event after ${timeoutMs} ms`
      : `final statuses: all ${total} messages sent have their event`,
  );
  return { completedAt, events };
}
