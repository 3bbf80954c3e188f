import type { KafkaSecurity } from '../config/kafka-security.ts';
import type { Logger } from '../observability/logger.ts';
import {
  compressionType,
  type KafkaCompression,
  registerCompressionCodecs,
} from './compression.ts';
import {
  BatchConsumer,
  type BatchConsumerOptions,
  heartbeatIntervalOf,
  RecordConsumer,
  type RecordConsumerOptions,
} from './consumers.ts';
import { cacheCoordinators } from './coordinator-cache.ts';
import { whileCoordinatorMoves } from './coordinator-errors.ts';
import { kafkaConnection, kafkaError } from './kafka-security.ts';
import {
  type Admin,
  type CompressionTypes,
  Kafka,
  type KafkaConfig,
  logLevel,
  Partitioners,
} from './kafkajs.ts';
import { kafkaLogCreator } from './kafkajs-adapters.ts';
import { RecordProducer, TRANSACTION_RETRY, TransactionalProducer } from './producers.ts';
import type { PartitionOffset, TopicSpec } from './records.ts';
import { CLIENT_RETRY, CONSUMER_METADATA_MAX_AGE_MS } from './retry-budget.ts';
import { createTopicsAndWait } from './topic-leaders.ts';

export type { BatchConsumerOptions, RecordBatch, RecordConsumerOptions } from './consumers.ts';
export { BatchConsumer, heartbeatIntervalOf, RecordConsumer } from './consumers.ts';
export { RecordProducer, TRANSACTION_RETRY, TransactionalProducer } from './producers.ts';
export type { InboundRecord, OutboundRecord, PartitionOffset, TopicSpec } from './records.ts';
export { produceChunks, recordSize } from './records.ts';

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
  /** Counts the requests the transactional producers send, by kafkajs's API name. */
  readonly onTransactionalRequest?: (api: string) => void;
  /**
   * Bytes of records per produce request at most (default 512 KiB). The broker judges a
   * whole record batch against the topic's `max.message.bytes`, so this must stay below
   * the smallest limit of the topics produced to.
   */
  readonly maxProduceBytes?: number;
}

/** How long a topic's partition count is trusted before it is read again. */
const PARTITION_COUNT_TTL_MS = 60_000;

/** Retries of admin calls, consumers and plain producers (retry-budget.ts). */
export { CLIENT_RETRY } from './retry-budget.ts';

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
    // Without it each transaction looks its coordinators up four or more times.
    cacheCoordinators(this.#transactionalKafka);
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
      await createTopicsAndWait(
        admin,
        this.#config,
        missing.map((s) => ({
          topic: s.topic,
          numPartitions: s.partitions,
          replicationFactor: s.replicationFactor,
          configEntries: Object.entries(s.config ?? {}).map(([name, value]) => ({ name, value })),
        })),
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
      // kafkajs gives up on a coordinator that just moved or still loads the group.
      const answer = await whileCoordinatorMoves(() =>
        admin.fetchOffsets({ groupId, topics: [topic] }),
      );
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
    const { onTransactionalRequest, logger } = this.#options;
    if (onTransactionalRequest) {
      producer.on(producer.events.REQUEST, (event) =>
        onTransactionalRequest(event.payload.apiName),
      );
    }
    return new TransactionalProducer(
      producer,
      transactionalId,
      this.#compression,
      (topic) => this.#partitionCount(topic),
      this.#options.maxProduceBytes,
      (partitions) => this.#unacknowledged(partitions),
      (attempt, waitMs) =>
        logger.debug(
          { transactionalId, attempt, waitMs },
          'transaction coordinator still completing the previous transaction; asking again',
        ),
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
      // Each wait capped, so fetching resumes within seconds of a broker's return.
      retry: CLIENT_RETRY,
      // A dead leader's partitions are looked up again within seconds (retry-budget.ts).
      metadataMaxAge: CONSUMER_METADATA_MAX_AGE_MS,
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
