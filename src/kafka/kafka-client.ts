/**
 * The only module that imports kafkajs. The rest of ferry sees the small types
 * below (records, a batch consumer, producers), so the client can be swapped.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import {
  type Admin,
  type CompressionTypes,
  type Consumer,
  type IHeaders,
  Kafka,
  type KafkaConfig,
  type KafkaMessage,
  logLevel,
  Partitioners,
  type Producer,
} from 'kafkajs';
import type { KafkaSecurity } from '../config/kafka-security.ts';
import type { Logger } from '../observability/logger.ts';
import { PartitionAssigner, type PartitionCount, sendAcknowledged } from './acknowledged-send.ts';
import {
  compressionType,
  type KafkaCompression,
  registerCompressionCodecs,
} from './compression.ts';
import { kafkaConnection, kafkaError } from './kafka-security.ts';
import { headersOf, kafkaLogCreator } from './kafkajs-adapters.ts';
import { waitForLeadersOnEveryBroker } from './topic-leaders.ts';

export interface InboundRecord {
  readonly topic: string;
  readonly partition: number;
  readonly offset: string;
  readonly key: Buffer | null;
  readonly value: Buffer | null;
  readonly headers: Readonly<Record<string, string>>;
  /** Milliseconds since the epoch, as a string (Kafka record timestamp). */
  readonly timestamp: string;
}

export interface OutboundRecord {
  readonly topic: string;
  readonly key: string | Buffer | null;
  readonly value: string | Buffer | null;
  readonly headers?: Readonly<Record<string, string | Buffer>>;
}

export interface TopicSpec {
  readonly topic: string;
  readonly partitions: number;
  readonly replicationFactor: number;
  readonly config?: Readonly<Record<string, string>>;
}

export interface PartitionOffset {
  readonly topic: string;
  readonly partition: number;
  /** The next offset to consume (last processed + 1). */
  readonly offset: string;
  /** Stored with the committed offset by the group coordinator; ferry keeps its send intent here. */
  readonly metadata?: string | null;
}

export interface KafkaClientOptions {
  readonly brokers: readonly string[];
  readonly clientId: string;
  readonly logger: Logger;
  /** TLS and SASL settings; plaintext without. */
  readonly security?: KafkaSecurity;
  /**
   * The codec of the record batches ferry's producers write (FERRY_KAFKA_COMPRESSION).
   * Default `none`. Reading accepts every codec whatever this is.
   */
  readonly compression?: KafkaCompression;
  /** Counts errors by client and kind, for metrics. */
  readonly onError?: (client: 'producer' | 'consumer' | 'admin', kind: string) => void;
  /**
   * Bytes of records per produce request at most (default 512 KiB). The broker judges a
   * whole record batch against the topic's `max.message.bytes`, so this must stay below
   * the smallest limit of the topics produced to.
   */
  readonly maxProduceBytes?: number;
}

function inbound(topic: string, partition: number, message: KafkaMessage): InboundRecord {
  return {
    topic,
    partition,
    offset: message.offset,
    key: message.key,
    value: message.value,
    headers: headersOf(message.headers),
    timestamp: message.timestamp,
  };
}

/**
 * Bytes of records per produce request at most. kafkajs writes all records of a
 * partition in one request as one record batch, and the broker refuses a batch over
 * `max.message.bytes` (1 MiB by default): a fetched batch of thousands of commands
 * yields more results than that, so they go in several requests.
 */
const MAX_PRODUCE_REQUEST_BYTES = 512 * 1024;

/** How long a topic's partition count is trusted before it is read again. */
const PARTITION_COUNT_TTL_MS = 60_000;

function sizeOf(value: string | Buffer | null): number {
  if (value === null) return 0;
  return typeof value === 'string' ? Buffer.byteLength(value) : value.length;
}

/** Splits records into consecutive groups of at most `maxBytes` (a larger record alone). */
export function produceChunks(
  records: readonly OutboundRecord[],
  maxBytes: number = MAX_PRODUCE_REQUEST_BYTES,
): OutboundRecord[][] {
  const chunks: OutboundRecord[][] = [];
  let current: OutboundRecord[] = [];
  let bytes = 0;
  for (const record of records) {
    let size = sizeOf(record.key) + sizeOf(record.value) + 64;
    for (const [name, value] of Object.entries(record.headers ?? {})) {
      size += name.length + sizeOf(value);
    }
    if (current.length > 0 && bytes + size > maxBytes) {
      chunks.push(current);
      current = [];
      bytes = 0;
    }
    current.push(record);
    bytes += size;
  }
  if (current.length > 0) chunks.push(current);
  return chunks;
}

function toKafkaMessages(records: readonly OutboundRecord[]) {
  const byTopic = new Map<
    string,
    { key: string | Buffer | null; value: string | Buffer | null; headers?: IHeaders }[]
  >();
  for (const record of records) {
    let list = byTopic.get(record.topic);
    if (!list) {
      list = [];
      byTopic.set(record.topic, list);
    }
    list.push(
      record.headers
        ? { key: record.key, value: record.value, headers: { ...record.headers } }
        : { key: record.key, value: record.value },
    );
  }
  return [...byTopic].map(([topic, messages]) => ({ topic, messages }));
}

/** Retries of admin calls, consumers and plain producers: 300 ms doubling, about a minute in all. */
export const CLIENT_RETRY = { initialRetryTime: 300, retries: 8 } as const;

/**
 * Retries of the transactional producers. A transaction begun right after the previous
 * commit is answered CONCURRENT_TRANSACTIONS while the broker still writes the previous
 * one's markers, which takes a few milliseconds; kafkajs retries it after the client's
 * `initialRetryTime` (the transaction manager's own calls know no other), so with 300 ms
 * one batch in ten waited 250–380 ms for nothing. Starting at 5 ms with
 * more retries keeps the same patience in all (about a minute, each wait capped at 30 s).
 */
export const TRANSACTION_RETRY = {
  initialRetryTime: 5,
  retries: 14,
  maxRetryTime: 30_000,
} as const;

/** Sends records with acks from all in-sync replicas; idempotent, so a retry writes no duplicate. */
export class RecordProducer {
  readonly #producer: Producer;
  readonly #compression: CompressionTypes;
  readonly #maxRequestBytes: number;
  readonly #partitions: PartitionAssigner;
  /** kafkajs's answer left partitions out (a leader change): they are being sent again. */
  readonly #onResend: (partitions: readonly string[]) => void;
  constructor(
    producer: Producer,
    compression: CompressionTypes,
    partitionCount: PartitionCount,
    maxRequestBytes = MAX_PRODUCE_REQUEST_BYTES,
    onResend: (partitions: readonly string[]) => void = () => undefined,
  ) {
    this.#producer = producer;
    this.#compression = compression;
    this.#partitions = new PartitionAssigner(partitionCount);
    this.#maxRequestBytes = maxRequestBytes;
    this.#onResend = onResend;
  }
  /** Bytes of records per produce request at most: a larger send is split into several. */
  get maxRequestBytes(): number {
    return this.#maxRequestBytes;
  }
  async connect(): Promise<void> {
    await this.#producer.connect();
  }
  /** Resolves once Kafka acknowledged every record. @throws FerryError `kafka`. */
  async send(records: readonly OutboundRecord[]): Promise<void> {
    if (records.length === 0) return;
    try {
      for (const chunk of produceChunks(records, this.#maxRequestBytes)) {
        await sendAcknowledged(
          (batch) => this.#producer.sendBatch(batch),
          await this.#partitions.assign(toKafkaMessages(chunk)),
          { acks: -1, compression: this.#compression },
          this.#onResend,
        );
      }
    } catch (error: unknown) {
      throw kafkaError(error, 'producing records failed');
    }
  }
  async disconnect(): Promise<void> {
    await this.#producer.disconnect();
  }
}

/** Attempts of a transaction's offset commit while the group's coordinator moves or loads. */
const OFFSET_COMMIT_ATTEMPTS = 8;

/**
 * kafkajs means to retry a TxnOffsetCommit answered by a coordinator that is not (yet)
 * the group's, but it looks for the error type `NOT_COORDINATOR` while its own error
 * table names code 16 `NOT_COORDINATOR_FOR_GROUP`: the answer aborts the transaction
 * instead. It is what a coordinator that just moved or is still loading the group says,
 * after a broker restart or for a group's first commit. Adding the group's offsets to a
 * transaction again is allowed, so the step is retried here with a short backoff.
 */
async function sendOffsetsRetryingCoordinator(send: () => Promise<void>): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await send();
      return;
    } catch (error: unknown) {
      const type = (error as { type?: unknown } | null)?.type;
      const moving =
        type === 'NOT_COORDINATOR_FOR_GROUP' || type === 'COORDINATOR_LOAD_IN_PROGRESS';
      if (!moving || attempt >= OFFSET_COMMIT_ATTEMPTS) throw error;
      await sleep(Math.min(1_000, 10 * 2 ** attempt));
    }
  }
}

/**
 * A transactional producer: records and the consumer offsets that produced them
 * become visible together or not at all (readers at read_committed).
 */
export class TransactionalProducer {
  readonly #producer: Producer;
  readonly #compression: CompressionTypes;
  readonly #maxRequestBytes: number;
  readonly #partitions: PartitionAssigner;
  /** kafkajs's answer left partitions out (a leader change): they are being sent again. */
  readonly #onResend: (partitions: readonly string[]) => void;
  readonly transactionalId: string;
  constructor(
    producer: Producer,
    transactionalId: string,
    compression: CompressionTypes,
    partitionCount: PartitionCount,
    maxRequestBytes = MAX_PRODUCE_REQUEST_BYTES,
    onResend: (partitions: readonly string[]) => void = () => undefined,
  ) {
    this.#producer = producer;
    this.transactionalId = transactionalId;
    this.#compression = compression;
    this.#partitions = new PartitionAssigner(partitionCount);
    this.#maxRequestBytes = maxRequestBytes;
    this.#onResend = onResend;
  }
  /**
   * Connects and initialises the transactional id, which bumps its epoch: from here on
   * a previous holder of the id (a replica that was frozen or expelled) can no longer
   * commit, and its open transaction is aborted. kafkajs's `connect()` alone does not
   * do this (it registers the transactional id only at the first `transaction()`), so
   * an empty transaction is begun and dropped locally: that is what sends
   * InitProducerId with the transactional id.
   */
  async connect(): Promise<void> {
    await this.#producer.connect();
    const transaction = await this.#producer.transaction();
    // Nothing was added to it, so kafkajs ends it without a request to the broker.
    await transaction.abort();
  }
  /**
   * Commits `records` and the group's `offsets` in one transaction; aborts on failure.
   * @throws FerryError `kafka`: nothing of this transaction is visible then.
   */
  async commit(
    records: readonly OutboundRecord[],
    groupId: string,
    offsets: readonly PartitionOffset[],
  ): Promise<void> {
    const transaction = await this.#producer.transaction();
    try {
      for (const chunk of produceChunks(records, this.#maxRequestBytes)) {
        await sendAcknowledged(
          (batch) => transaction.sendBatch(batch),
          await this.#partitions.assign(toKafkaMessages(chunk)),
          { acks: -1, compression: this.#compression },
          this.#onResend,
        );
      }
      await sendOffsetsRetryingCoordinator(() =>
        transaction.sendOffsets({
          consumerGroupId: groupId,
          topics: offsets.map((o) => ({
            topic: o.topic,
            partitions: [
              { partition: o.partition, offset: o.offset, metadata: o.metadata ?? null },
            ],
          })),
        }),
      );
      await transaction.commit();
    } catch (error: unknown) {
      if (transaction.isActive()) await transaction.abort().catch(() => undefined);
      throw kafkaError(error, 'the result transaction failed');
    }
  }
  async disconnect(): Promise<void> {
    await this.#producer.disconnect();
  }
}

export interface RecordBatch {
  readonly topic: string;
  readonly partition: number;
  readonly records: readonly InboundRecord[];
  /** Records behind this batch's last one (high watermark − last offset − 1). */
  readonly lag: number;
  /** Sends a heartbeat when the last one is older than the consumer's heartbeat interval. */
  heartbeat(): Promise<void>;
  /** False once the consumer is stopping or a rewind of the partition is pending. */
  isCurrent(): boolean;
  /**
   * Fetches the partition again from this batch's first record. Batches of the partition
   * handed over before the call come again after it, so their handler drops them.
   */
  rewind(): void;
}

export interface BatchConsumerOptions {
  readonly groupId: string;
  readonly topic: string;
  /** Batches of different partitions handled at once. Default 16. */
  readonly partitionsConsumedConcurrently?: number;
  /** Bytes fetched per partition per request; bounds memory per batch. Default 1 MiB. */
  readonly maxBytesPerPartition?: number;
  /** Bytes of one fetch response over all partitions. Default 4 MiB. */
  readonly maxBytes?: number;
  readonly sessionTimeoutMs?: number;
  /**
   * How often the member heartbeats. Default: a tenth of the session timeout, at most
   * 3 s and at least 100 ms, so that a heartbeat throttled by kafkajs (it skips one sent
   * sooner than this after the previous) still arrives well within the session.
   */
  readonly heartbeatIntervalMs?: number;
  /**
   * Longest wait of a fetch for new records. kafkajs also sleeps this long when every
   * partition is paused, so it bounds how soon fetching restarts after a pause. Default 250.
   */
  readonly fetchMaxWaitMs?: number;
  /**
   * Takes a fetched batch. The consumer does not wait for it: the next fetch goes out at
   * once, so fetching never waits behind the handling of earlier batches. The handler
   * owns ordering (one batch of a partition at a time), backpressure (`pause`) and
   * retries (`rewind`); nothing is committed to the group but what it commits itself.
   */
  readonly onBatch: (batch: RecordBatch) => void;
  /** A rebalance started: partitions may be taken away. */
  readonly onRebalancing?: () => void;
  /** The partitions of the topic this member owns, after each rebalance. */
  readonly onAssignment?: (partitions: readonly number[]) => void;
  /** The consumer stopped for good (kafkajs gave up restarting it). */
  readonly onCrash?: (error: Error) => void;
}

/** Requests whose success confirms the group membership (kafkajs API names). */
const MEMBERSHIP_REQUESTS = new Set(['Heartbeat', 'SyncGroup']);

/** The heartbeat interval a batch consumer uses (see BatchConsumerOptions.heartbeatIntervalMs). */
export function heartbeatIntervalOf(options: BatchConsumerOptions): number {
  if (options.heartbeatIntervalMs !== undefined) return options.heartbeatIntervalMs;
  const session = options.sessionTimeoutMs ?? 30_000;
  return Math.max(100, Math.min(3_000, Math.floor(session / 10)));
}

/** A consumer group member that hands whole fetched batches to one handler, per partition in order. */
export class BatchConsumer {
  readonly #consumer: Consumer;
  readonly #options: BatchConsumerOptions;
  #running = false;
  #assigned: readonly number[] = [];
  #memberId: string | undefined;
  /** When the coordinator last confirmed this membership (a heartbeat or a join), ms. */
  #confirmedAt = 0;

  constructor(consumer: Consumer, options: BatchConsumerOptions) {
    this.#consumer = consumer;
    this.#options = options;
    this.heartbeatIntervalMs = heartbeatIntervalOf(options);
    // The coordinator counts the session from when it received a request, so the time
    // the request was sent, not when its answer was handled, is what the membership is
    // sure of: a process frozen between the two must not take the answer for fresh.
    let lastSentAt = 0;
    consumer.on(consumer.events.REQUEST, (event) => {
      if (MEMBERSHIP_REQUESTS.has(event.payload.apiName)) lastSentAt = event.payload.sentAt;
    });
    consumer.on(consumer.events.HEARTBEAT, () => {
      this.#confirmedAt = lastSentAt;
    });
    consumer.on(consumer.events.GROUP_JOIN, (event) => {
      this.#confirmedAt = lastSentAt;
      this.#memberId = event.payload.memberId;
      this.#assigned = [...(event.payload.memberAssignment[options.topic] ?? [])].sort(
        (a, b) => a - b,
      );
      options.onAssignment?.(this.#assigned);
    });
    consumer.on(consumer.events.CRASH, (event) => {
      if (!event.payload.restart) options.onCrash?.(event.payload.error);
    });
    consumer.on(consumer.events.REBALANCING, () => options.onRebalancing?.());
  }

  readonly heartbeatIntervalMs: number;

  /**
   * When the group coordinator last confirmed this member (its last successful
   * heartbeat or join), in ms since the epoch; 0 before the first join. The member is
   * expelled a session timeout after the last heartbeat the coordinator received, so a
   * sender that checks this against a lease shorter than the session stops before its
   * partitions can have moved to another replica, even after the process was frozen.
   */
  get confirmedAt(): number {
    return this.#confirmedAt;
  }

  /** This member's id in the group, from its last join. */
  get memberId(): string | undefined {
    return this.#memberId;
  }

  get assignedPartitions(): readonly number[] {
    return this.#assigned;
  }

  get running(): boolean {
    return this.#running;
  }

  /**
   * Joins the group and starts fetching.
   * @param paused start with fetching paused, so that not even a first batch is fetched.
   */
  async start({ paused = false }: { paused?: boolean } = {}): Promise<void> {
    if (this.#running) return;
    const { topic, onBatch } = this.#options;
    await this.#consumer.connect();
    // A new group starts at the earliest offset: nothing produced before the first start is lost.
    await this.#consumer.subscribe({ topics: [topic], fromBeginning: true });
    const running = this.#consumer.run({
      autoCommit: false,
      eachBatchAutoResolve: false,
      partitionsConsumedConcurrently: this.#options.partitionsConsumedConcurrently ?? 16,
      // kafkajs fetches again only once every batch of the last fetch was handled, so a
      // handler that awaited its transaction here would make each fetch wait for the
      // slowest partition's commit. Batches are handed over and their offsets resolved at
      // once instead; with autoCommit off, kafkajs never commits them to the group (the
      // handler's transactions do), and after a rejoin it fetches from the committed offset.
      eachBatch: async (payload) => {
        const { batch } = payload;
        // A rewind of this partition is pending: its records come again from there.
        if (batch.isEmpty() || payload.isStale()) return;
        const records = batch.messages.map((m) => inbound(batch.topic, batch.partition, m));
        const first = batch.firstOffset() ?? records[0]?.offset;
        payload.resolveOffset(batch.lastOffset());
        onBatch({
          topic: batch.topic,
          partition: batch.partition,
          records,
          lag: Math.max(0, Number(batch.offsetLag())),
          heartbeat: () => payload.heartbeat(),
          isCurrent: () => payload.isRunning() && !payload.isStale(),
          rewind: () => {
            if (first === undefined) return;
            this.#consumer.seek({ topic: batch.topic, partition: batch.partition, offset: first });
          },
        });
      },
    });
    // kafkajs creates the consumer group synchronously inside run() and fetches only once
    // it has joined: pausing here comes before the first fetch.
    if (paused) this.pause();
    await running;
    this.#running = true;
  }

  /** Stops fetching new batches for the whole topic; batches in progress finish. */
  pause(): void {
    this.#consumer.pause([{ topic: this.#options.topic }]);
  }

  resume(): void {
    this.#consumer.resume([{ topic: this.#options.topic }]);
  }

  /** Leaves the group after the batches in progress finish. */
  async stop(): Promise<void> {
    if (!this.#running) {
      await this.#consumer.disconnect();
      return;
    }
    this.#running = false;
    await this.#consumer.stop();
    await this.#consumer.disconnect();
  }
}

export interface RecordConsumerOptions {
  readonly groupId: string;
  readonly topics: readonly string[];
  /** Where a new group starts. Default true (earliest). */
  readonly fromBeginning?: boolean;
}

/**
 * Reads records one at a time at read_committed, committing automatically:
 * for tools and tests that watch the result and status topics (ferryctl, test helpers).
 */
export class RecordConsumer {
  readonly #consumer: Consumer;
  readonly #options: RecordConsumerOptions;
  constructor(consumer: Consumer, options: RecordConsumerOptions) {
    this.#consumer = consumer;
    this.#options = options;
  }
  async start(onRecord: (record: InboundRecord) => void | Promise<void>): Promise<void> {
    await this.#consumer.connect();
    await this.#consumer.subscribe({
      topics: [...this.#options.topics],
      fromBeginning: this.#options.fromBeginning ?? true,
    });
    await this.#consumer.run({
      eachMessage: async ({ topic, partition, message }) => {
        await onRecord(inbound(topic, partition, message));
      },
    });
  }
  async stop(): Promise<void> {
    await this.#consumer.disconnect();
  }
}

/** Entry point to Kafka for ferry: admin calls, producers and the batch consumer. */
export class KafkaClient {
  readonly #kafka: Kafka;
  readonly #options: KafkaClientOptions;
  readonly #compression: CompressionTypes;
  /** A promise, so concurrent first calls share one connection. */
  #admin: Promise<Admin> | undefined;
  readonly #partitionCounts = new Map<string, { count: number; at: number }>();
  /** What every client of this instance is built from (one broker's probe included). */
  readonly #config: KafkaConfig;
  /** The same connection with fast retries, for the transactional producers (see TRANSACTION_RETRY). */
  readonly #transactionalKafka: Kafka;

  constructor(options: KafkaClientOptions) {
    // Before any consumer exists: a batch in any codec must not stop the process.
    registerCompressionCodecs();
    this.#options = options;
    this.#compression = compressionType(options.compression ?? 'none');
    this.#config = {
      ...kafkaConnection(options),
      // kafkajs's debug lines (every request, every retry) only when ferry logs at trace.
      logLevel: options.logger.isLevelEnabled('trace') ? logLevel.DEBUG : logLevel.INFO,
      logCreator: kafkaLogCreator(options.logger, 'kafka'),
      retry: CLIENT_RETRY,
    };
    this.#kafka = new Kafka(this.#config);
    this.#transactionalKafka = new Kafka({ ...this.#config, retry: TRANSACTION_RETRY });
  }

  #adminClient(): Promise<Admin> {
    if (!this.#admin) {
      const admin = this.#kafka.admin();
      const connected = admin.connect().then(() => admin);
      connected.catch(() => {
        if (this.#admin === connected) this.#admin = undefined;
      });
      this.#admin = connected;
    }
    return this.#admin;
  }

  #unacknowledged(partitions: readonly string[]): void {
    this.#options.onError?.('producer', 'unacknowledged_partitions');
    this.#options.logger.warn(
      { partitions },
      'a send left partitions unacknowledged after a leader change; sending their records again',
    );
  }

  /**
   * How many partitions `topic` has, from the metadata, remembered for a minute: a
   * producer picks partitions itself (acknowledged-send.ts), and a topic whose
   * partitions were added is seen within that minute. @throws FerryError `kafka`.
   */
  async #partitionCount(topic: string): Promise<number> {
    const cached = this.#partitionCounts.get(topic);
    if (cached && Date.now() - cached.at < PARTITION_COUNT_TTL_MS) return cached.count;
    try {
      const admin = await this.#adminClient();
      const { topics } = await admin.fetchTopicMetadata({ topics: [topic] });
      const count = topics[0]?.partitions.length ?? 0;
      if (count === 0) throw new Error(`no partitions of ${topic} in the metadata`);
      this.#partitionCounts.set(topic, { count, at: Date.now() });
      return count;
    } catch (error: unknown) {
      this.#options.onError?.('admin', 'fetch_metadata');
      throw kafkaError(error, `reading the partitions of ${topic} failed`);
    }
  }

  /** Creates the topics that are missing; existing ones are left as they are. @throws FerryError `kafka`. */
  async ensureTopics(specs: readonly TopicSpec[]): Promise<void> {
    try {
      const admin = await this.#adminClient();
      const existing = new Set(await admin.listTopics());
      const missing = specs.filter((s) => !existing.has(s.topic));
      if (missing.length === 0) return;
      // kafkajs's own waitForLeaders asks one broker, and gives up when that broker has
      // not yet heard of the new topic (UNKNOWN_TOPIC_OR_PARTITION on a cluster): the wait
      // below asks every broker, again until each shows a leader for every partition.
      await admin.createTopics({
        waitForLeaders: false,
        topics: missing.map((s) => ({
          topic: s.topic,
          numPartitions: s.partitions,
          replicationFactor: s.replicationFactor,
          configEntries: Object.entries(s.config ?? {}).map(([name, value]) => ({ name, value })),
        })),
      });
      await waitForLeadersOnEveryBroker(
        admin,
        this.#config,
        missing.map((s) => ({ topic: s.topic, partitions: s.partitions })),
      );
    } catch (error: unknown) {
      this.#options.onError?.('admin', 'create_topics');
      // Another replica may have created them between list and create.
      if (error instanceof Error && /already exists/i.test(error.message)) return;
      throw kafkaError(error, 'creating topics failed');
    }
  }

  /**
   * Whether the group is stable with this member in it: then the partitions of the
   * member's last join are still its own, and fencing their producers is safe.
   * @throws FerryError `kafka` when the coordinator cannot be asked.
   */
  async isStableMember(groupId: string, memberId: string | undefined): Promise<boolean> {
    if (memberId === undefined) return false;
    try {
      const admin = await this.#adminClient();
      const { groups } = await admin.describeGroups([groupId]);
      const group = groups.find((g) => g.groupId === groupId);
      return group?.state === 'Stable' && group.members.some((m) => m.memberId === memberId);
    } catch (error: unknown) {
      this.#options.onError?.('admin', 'describe_group');
      throw kafkaError(error, 'describing the consumer group failed');
    }
  }

  /** True when the cluster answers a metadata request. */
  async ping(): Promise<boolean> {
    try {
      const admin = await this.#adminClient();
      await admin.describeCluster();
      return true;
    } catch {
      return false;
    }
  }

  /**
   * The group's committed offsets for a topic, by partition (offset -1 when none),
   * with the metadata stored beside each. @throws FerryError `kafka`.
   */
  async committedOffsets(groupId: string, topic: string): Promise<Map<number, PartitionOffset>> {
    try {
      const admin = await this.#adminClient();
      const answer = await admin.fetchOffsets({ groupId, topics: [topic] });
      const result = new Map<number, PartitionOffset>();
      for (const p of answer[0]?.partitions ?? []) {
        result.set(p.partition, {
          topic,
          partition: p.partition,
          offset: p.offset,
          metadata: p.metadata,
        });
      }
      return result;
    } catch (error: unknown) {
      this.#options.onError?.('admin', 'fetch_offsets');
      throw kafkaError(error, 'reading committed offsets failed');
    }
  }

  /** The end offset (high watermark) of each partition of a topic. */
  async endOffsets(topic: string): Promise<Map<number, string>> {
    const admin = await this.#adminClient();
    const offsets = await admin.fetchTopicOffsets(topic);
    return new Map(offsets.map((o) => [o.partition, o.high]));
  }

  /**
   * Records of each partition of `topic` the group has not committed yet (end offset
   * minus committed offset; a partition without a commit counts from 0).
   * @throws FerryError `kafka`.
   */
  async groupLag(groupId: string, topic: string): Promise<Map<number, number>> {
    try {
      const [ends, committed] = await Promise.all([
        this.endOffsets(topic),
        this.committedOffsets(groupId, topic),
      ]);
      const lag = new Map<number, number>();
      for (const [partition, end] of ends) {
        const from = Math.max(0, Number(committed.get(partition)?.offset ?? 0));
        lag.set(partition, Math.max(0, Number(end) - from));
      }
      return lag;
    } catch (error: unknown) {
      throw kafkaError(error, 'reading the consumer group lag failed');
    }
  }

  createProducer(): RecordProducer {
    const producer = this.#kafka.producer({
      idempotent: true,
      maxInFlightRequests: 1,
      createPartitioner: Partitioners.DefaultPartitioner,
    });
    producer.on(producer.events.REQUEST_TIMEOUT, () =>
      this.#options.onError?.('producer', 'timeout'),
    );
    return new RecordProducer(
      producer,
      this.#compression,
      (topic) => this.#partitionCount(topic),
      this.#options.maxProduceBytes,
      (partitions) => this.#unacknowledged(partitions),
    );
  }

  createTransactionalProducer(transactionalId: string): TransactionalProducer {
    const producer = this.#transactionalKafka.producer({
      transactionalId,
      idempotent: true,
      createPartitioner: Partitioners.DefaultPartitioner,
      maxInFlightRequests: 1,
      transactionTimeout: 60_000,
    });
    return new TransactionalProducer(
      producer,
      transactionalId,
      this.#compression,
      (topic) => this.#partitionCount(topic),
      this.#options.maxProduceBytes,
      (partitions) => this.#unacknowledged(partitions),
    );
  }

  createBatchConsumer(options: BatchConsumerOptions): BatchConsumer {
    const consumer = this.#kafka.consumer({
      groupId: options.groupId,
      sessionTimeout: options.sessionTimeoutMs ?? 30_000,
      heartbeatInterval: heartbeatIntervalOf(options),
      maxBytesPerPartition: options.maxBytesPerPartition ?? 1024 * 1024,
      maxWaitTimeInMs: options.fetchMaxWaitMs ?? 250,
      maxBytes: options.maxBytes ?? 4 * 1024 * 1024,
      readUncommitted: false,
      retry: { retries: 8 },
    });
    consumer.on(consumer.events.CRASH, () => this.#options.onError?.('consumer', 'crash'));
    consumer.on(consumer.events.REQUEST_TIMEOUT, () =>
      this.#options.onError?.('consumer', 'timeout'),
    );
    return new BatchConsumer(consumer, options);
  }

  createRecordConsumer(options: RecordConsumerOptions): RecordConsumer {
    const consumer = this.#kafka.consumer({
      groupId: options.groupId,
      readUncommitted: false,
      maxWaitTimeInMs: 100,
    });
    return new RecordConsumer(consumer, options);
  }

  async close(): Promise<void> {
    const admin = this.#admin;
    this.#admin = undefined;
    await admin?.then((a) => a.disconnect()).catch(() => undefined);
  }
}
