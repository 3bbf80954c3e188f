/**
 * Reads one partition from an offset up to an end offset without a consumer group:
 * fetches from the partition's leader, as a consumer that assigns its partitions itself
 * would. kafkajs cannot read without a group, and joining a new group waits the broker's
 * `group.initial.rebalance.delay.ms` (3 s by default); the control topic is read whole
 * this way at start (control-topic.ts). Records come at read_committed, filtered by
 * kafkajs's own batch logic (aborted transactions, control records, offsets before the
 * fetch offset).
 */
import { createRequire } from 'node:module';
import type { StoredRecord, TopicReader } from './kafka-port.ts';
import type { Kafka } from './kafkajs.ts';
import { type KafkajsCluster, newCluster } from './kafkajs-cluster.ts';

const require = createRequire(import.meta.url);

interface KafkajsMessage {
  readonly offset: string;
  readonly key: Buffer | null;
  readonly value: Buffer | null;
}
interface KafkajsBatch {
  readonly messages: readonly KafkajsMessage[];
  lastOffset(): string;
}
type BatchClass = new (
  topic: string,
  fetchedOffset: string,
  partitionData: unknown,
) => KafkajsBatch;
const Batch = require('kafkajs/src/consumer/batch.js') as BatchClass;

/** kafkajs's READ_COMMITTED isolation level. */
const READ_COMMITTED = 1;
/** Bytes one fetch answers with at most. */
const FETCH_MAX_BYTES = 1024 * 1024;
/** How long leader moves and a loading partition are tried again. */
const DEADLINE_MS = 30_000;

export interface PartitionRecord {
  readonly offset: number;
  readonly key: Buffer | null;
  readonly value: Buffer | null;
}

/**
 * Hands every record of `topic`/`partition` from `from` up to (not including) `end` to
 * `onRecord`, in offset order. @returns `end` (what compaction removed is passed over;
 * what lies at `end` and after is left for the next read). @throws kafkajs's error: a refusal at
 * once, anything else after DEADLINE_MS.
 */
export async function readPartition(
  kafka: Kafka,
  topic: string,
  partition: number,
  from: number,
  end: number,
  onRecord: (record: PartitionRecord) => void,
): Promise<number> {
  if (from >= end) return from;
  return withTopicCluster(kafka, topic, (cluster) =>
    readRange(cluster, topic, partition, from, end, onRecord),
  );
}

/** Runs `body` on a cluster of its own that knows `topic`, disconnected afterwards. */
async function withTopicCluster<T>(
  kafka: Kafka,
  topic: string,
  body: (cluster: KafkajsCluster) => Promise<T>,
): Promise<T> {
  const cluster = newCluster(kafka);
  try {
    await cluster.connect();
    await cluster.addTargetTopic(topic);
    return await body(cluster);
  } finally {
    await cluster.disconnect().catch(() => undefined);
  }
}

/**
 * Every committed record of the partition that records written with `partition` land in
 * (`partition` modulo the topic's count), from its start to its last stable offset as of
 * the call. Partition count and offsets come from this read's own cluster: asking the
 * client's shared admin would refresh its metadata with this topic alone and leave the
 * topics other callers rely on out of it for a while.
 */
export async function readWholePartition(
  kafka: Kafka,
  topic: string,
  partition: number,
  onRecord: (record: PartitionRecord) => void,
): Promise<void> {
  await withTopicCluster(kafka, topic, async (cluster) => {
    const { target, from, end } = await partitionBounds(cluster, topic, partition);
    if (from < end) await readRange(cluster, topic, target, from, end, onRecord);
  });
}

/**
 * The partition's first offset and last stable offset, of the partition that records
 * written with `partition` land in (`partition` modulo the topic's count).
 */
async function partitionBounds(
  cluster: KafkajsCluster,
  topic: string,
  partition: number,
): Promise<{ target: number; from: number; end: number }> {
  const count = cluster.findTopicPartitionMetadata(topic).length;
  if (count === 0) throw new Error(`no partitions of ${topic} in the metadata`);
  const target = partition % count;
  const offsetOf = async (fromBeginning: boolean) => {
    const [answer] = await cluster.fetchTopicsOffset([
      { topic, fromBeginning, partitions: [{ partition: target }] },
    ]);
    const offset = answer?.partitions.find((p) => p.partition === target)?.offset;
    if (offset === undefined) throw new Error(`no offset of ${topic}/${target}`);
    return Number(offset);
  };
  return { target, from: await offsetOf(true), end: await offsetOf(false) };
}

/**
 * Reads partitions of one topic onward, on one cluster kept between reads (a cluster per
 * read costs a connection and a metadata request each time). A read that fails drops the
 * cluster: the next read starts on a new one.
 */
export class PartitionFollower implements TopicReader {
  readonly #kafka: Kafka;
  readonly #topic: string;
  #cluster: Promise<KafkajsCluster> | undefined;

  constructor(kafka: Kafka, topic: string) {
    this.#kafka = kafka;
    this.#topic = topic;
  }

  async readOn(
    partition: number,
    from: string,
    onRecord: (record: StoredRecord) => void,
  ): Promise<string> {
    const topic = this.#topic;
    try {
      const cluster = await this.#connected();
      const bounds = await partitionBounds(cluster, topic, partition);
      const start = Math.max(Number(from), bounds.from);
      if (start >= bounds.end) return String(start);
      const next = await readRange(cluster, topic, bounds.target, start, bounds.end, (r) =>
        onRecord({ offset: String(r.offset), key: r.key, value: r.value }),
      );
      return String(next);
    } catch (error: unknown) {
      await this.close();
      throw error;
    }
  }

  #connected(): Promise<KafkajsCluster> {
    if (!this.#cluster) {
      const cluster = newCluster(this.#kafka);
      this.#cluster = cluster
        .connect()
        .then(() => cluster.addTargetTopic(this.#topic))
        .then(() => cluster);
    }
    return this.#cluster;
  }

  async close(): Promise<void> {
    const cluster = this.#cluster;
    this.#cluster = undefined;
    await cluster?.then((c) => c.disconnect()).catch(() => undefined);
  }
}

async function readRange(
  cluster: KafkajsCluster,
  topic: string,
  partition: number,
  from: number,
  end: number,
  onRecord: (record: PartitionRecord) => void,
): Promise<number> {
  const deadline = Date.now() + DEADLINE_MS;
  let next = from;
  while (next < end) {
    let batch: KafkajsBatch;
    try {
      batch = await fetchOnce(cluster, topic, partition, next);
    } catch (error: unknown) {
      const retriable = (error as { retriable?: unknown }).retriable === true;
      if (!retriable || Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 200));
      await cluster.refreshMetadata().catch(() => undefined);
      continue;
    }
    for (const message of batch.messages) {
      const offset = Number(message.offset);
      if (offset < next || offset >= end) continue;
      onRecord({ offset, key: message.key, value: message.value });
    }
    // An empty answer (compacted away, aborted, control records) still moves on, but never
    // past `end`: records at `end` and after (a transaction that committed between the
    // end's lookup and this fetch) were not handed over, and a reader that goes on from
    // the returned offset must still get them.
    next = Math.max(next, Math.min(end, Number(batch.lastOffset()) + 1));
  }
  return next;
}

/**
 * One fetch of `topic`/`partition` from its start, without a group: proves Read on the
 * topic (a refusal is thrown as kafkajs's error) and reads nothing of use.
 */
export async function probeRead(kafka: Kafka, topic: string, partition = 0): Promise<void> {
  await withTopicCluster(kafka, topic, (cluster) => fetchOnce(cluster, topic, partition, 0));
}

async function fetchOnce(
  cluster: KafkajsCluster,
  topic: string,
  partition: number,
  offset: number,
): Promise<KafkajsBatch> {
  const leaders = cluster.findLeaderForPartitions(topic, [partition]);
  const leader = Object.keys(leaders)[0];
  if (leader === undefined) {
    throw Object.assign(new Error(`no leader of ${topic}/${partition} known`), { retriable: true });
  }
  const broker = await cluster.findBroker({ nodeId: Number(leader) });
  const fetchOffset = String(offset);
  const { responses } = await broker.fetch({
    replicaId: -1,
    isolationLevel: READ_COMMITTED,
    maxWaitTime: 0,
    minBytes: 1,
    maxBytes: FETCH_MAX_BYTES,
    topics: [{ topic, partitions: [{ partition, fetchOffset, maxBytes: FETCH_MAX_BYTES }] }],
  });
  const data = responses.find((r) => r.topicName === topic)?.partitions[0];
  if (data === undefined) throw new Error(`the fetch answer has no ${topic}/${partition}`);
  return new Batch(topic, fetchOffset, data);
}
