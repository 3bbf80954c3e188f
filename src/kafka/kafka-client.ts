/**
 * ferry's entry point to Kafka: one KafkaClient builds every kafkajs client ferry runs
 * from one connection (brokers, TLS, SASL, logging, retries): plain and transactional
 * producers (the latter on a kafkajs instance of their own, with fast retries and cached
 * coordinators), the batch consumer and record consumers, and reports their errors and
 * timeouts to ferry's metrics. Its admin requests are handed to kafka-admin.ts. It also
 * re-exports the types and helpers of records, producers and consumers, so that the rest
 * of ferry imports Kafka from this one module.
 */
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
import { KafkaAdmin } from './kafka-admin.ts';
import type { LogBounds, StoredRecord, TopicReader, TransactionalOptions } from './kafka-port.ts';
import { kafkaConnection } from './kafka-security.ts';
import {
  type CompressionTypes,
  Kafka,
  type KafkaConfig,
  logLevel,
  Partitioners,
} from './kafkajs.ts';
import { kafkaLogCreator } from './kafkajs-adapters.ts';
import { PartitionFollower, readWholePartition } from './partition-reader.ts';
import { RecordProducer, TRANSACTION_RETRY, TransactionalProducer } from './producers.ts';
import type { PartitionOffset, TopicSpec } from './records.ts';
import { CLIENT_RETRY, CONSUMER_METADATA_MAX_AGE_MS } from './retry-budget.ts';

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

/** Retries of admin calls, consumers and plain producers (retry-budget.ts). */
export { CLIENT_RETRY } from './retry-budget.ts';

/** Entry point to Kafka for ferry: admin calls, producers and the batch consumer. */
export class KafkaClient {
  readonly #kafka: Kafka;
  readonly #options: KafkaClientOptions;
  readonly #compression: CompressionTypes;
  /** The admin requests, on one connection opened on first use. */
  readonly #admin: KafkaAdmin;
  /** The same connection with fast retries, for the transactional producers (see TRANSACTION_RETRY). */
  readonly #transactionalKafka: Kafka;

  constructor(options: KafkaClientOptions) {
    // Before any consumer exists: a batch in any codec must not stop the process.
    registerCompressionCodecs();
    this.#options = options;
    this.#compression = compressionType(options.compression ?? 'none');
    // What every client of this instance is built from (one broker's probe included).
    const config: KafkaConfig = {
      ...kafkaConnection(options),
      // kafkajs's debug lines (every request, every retry) only when ferry logs at trace.
      logLevel: options.logger.isLevelEnabled('trace') ? logLevel.DEBUG : logLevel.INFO,
      logCreator: kafkaLogCreator(options.logger, 'kafka'),
      retry: CLIENT_RETRY,
    };
    this.#kafka = new Kafka(config);
    this.#admin = new KafkaAdmin(this.#kafka, config, (kind) => options.onError?.('admin', kind));
    this.#transactionalKafka = new Kafka({ ...config, retry: TRANSACTION_RETRY });
    // Without it each transaction looks its coordinators up four or more times.
    cacheCoordinators(this.#transactionalKafka);
  }

  #unacknowledged(partitions: readonly string[]): void {
    this.#options.onError?.('producer', 'unacknowledged_partitions');
    this.#options.logger.warn(
      { partitions },
      'a send left partitions unacknowledged after a leader change; sending their records again',
    );
  }

  /** Creates the topics that are missing; existing ones are left as they are. @throws FerryError `kafka`. */
  ensureTopics(specs: readonly TopicSpec[]): Promise<void> {
    return this.#admin.ensureTopics(specs);
  }

  /** Whether the group is stable with this member in it (KafkaAdmin.isStableMember). */
  isStableMember(groupId: string, memberId: string | undefined): Promise<boolean> {
    return this.#admin.isStableMember(groupId, memberId);
  }

  /** True when the cluster answers a metadata request. */
  ping(): Promise<boolean> {
    return this.#admin.ping();
  }

  /** The group's committed offsets for a topic, by partition (KafkaAdmin.committedOffsets). */
  committedOffsets(groupId: string, topic: string): Promise<Map<number, PartitionOffset>> {
    return this.#admin.committedOffsets(groupId, topic);
  }

  /** The end offset (high watermark) of each partition of a topic. */
  endOffsets(topic: string): Promise<Map<number, string>> {
    return this.#admin.endOffsets(topic);
  }

  /** The committed offsets of partitions once no open transaction holds one (KafkaAdmin.stableOffsets). */
  stableOffsets(
    groupId: string,
    topic: string,
    partitions: readonly number[],
    waitMs: number,
  ): Promise<Map<number, PartitionOffset>> {
    return this.#admin.stableOffsets(groupId, topic, partitions, waitMs);
  }

  /** Where each partition's log starts and ends (KafkaAdmin.logBounds). */
  logBounds(topic: string): Promise<Map<number, LogBounds>> {
    return this.#admin.logBounds(topic);
  }

  /**
   * Every committed record of the partition that records written with `partition` land
   * in (`partition` modulo the topic's count), from its start to its end as of the call,
   * in offset order; read without a consumer group, on a cluster of its own
   * (partition-reader.ts).
   */
  readWhole(topic: string, partition: number, onRecord: (record: StoredRecord) => void) {
    return readWholePartition(this.#kafka, topic, partition, (r) =>
      onRecord({ offset: String(r.offset), key: r.key, value: r.value }),
    );
  }

  /** A reader of `topic`'s partitions onward, keeping its connection (partition-reader.ts). */
  openTopicReader(topic: string): TopicReader {
    return new PartitionFollower(this.#kafka, topic);
  }

  /** Records of each partition of `topic` the group has not committed yet (KafkaAdmin.groupLag). */
  groupLag(groupId: string, topic: string): Promise<Map<number, number>> {
    return this.#admin.groupLag(groupId, topic);
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
      (topic) => this.#admin.partitionCount(topic),
      this.#options.maxProduceBytes,
      (partitions) => this.#unacknowledged(partitions),
    );
  }

  /**
   * A producer of transactions under `transactionalId`. With `fencedBy`, the offsets it
   * commits carry that consumer group membership (see `TransactionalProducer.fenceOffsetsBy`).
   */
  createTransactionalProducer(
    transactionalId: string,
    options: TransactionalOptions = {},
  ): TransactionalProducer {
    const producer = this.#transactionalKafka.producer({
      transactionalId,
      idempotent: true,
      createPartitioner: Partitioners.DefaultPartitioner,
      maxInFlightRequests: 1,
      transactionTimeout: options.transactionTimeoutMs ?? 60_000,
    });
    const { onTransactionalRequest, logger } = this.#options;
    if (onTransactionalRequest) {
      producer.on(producer.events.REQUEST, (event) =>
        onTransactionalRequest(event.payload.apiName),
      );
    }
    const transactional = new TransactionalProducer(
      producer,
      transactionalId,
      this.#compression,
      (topic) => this.#admin.partitionCount(topic),
      this.#options.maxProduceBytes,
      (partitions) => this.#unacknowledged(partitions),
      (attempt, waitMs) =>
        logger.debug(
          { transactionalId, attempt, waitMs },
          'transaction coordinator still completing the previous transaction; asking again',
        ),
    );
    if (options.fencedBy) transactional.fenceOffsetsBy(options.fencedBy);
    return transactional;
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

  close(): Promise<void> {
    return this.#admin.close();
  }
}
