/**
 * A compacted, single-partition topic that every replica reads whole and then
 * follows (the fleet's control topic, src/fleet/). Like kafka-client.ts, a place
 * where kafkajs is imported.
 *
 * At start the topic is read up to its end without a group (partition-reader.ts), so
 * start-up does not wait for a group join. To follow it afterwards the follower joins a
 * group of its own (`<prefix>.<uuid>`, kafkajs cannot follow a partition without one)
 * that never commits and is deleted at stop: it starts at the beginning, passes over
 * what was read already, and never shares partitions with anyone. Changes written while
 * it joins (about the broker's `group.initial.rebalance.delay.ms`, 3 s by default, after
 * the start) are read once it has joined.
 */
import { randomUUID } from 'node:crypto';
import type { KafkaSecurity } from '../config/kafka-security.ts';
import { FerryError } from '../errors.ts';
import type { Logger } from '../observability/logger.ts';
import { type AclNeed, aclRefusal, principalOf } from './acl-grants.ts';
import { registerCompressionCodecs } from './compression.ts';
import { kafkaConnection, kafkaError, kafkaRefusalOf } from './kafka-security.ts';
import { type Admin, type Consumer, Kafka, logLevel, type Producer } from './kafkajs.ts';
import { kafkaLogCreator } from './kafkajs-adapters.ts';
import { readPartition } from './partition-reader.ts';
import { CLIENT_RETRY, CONSUMER_METADATA_MAX_AGE_MS } from './retry-budget.ts';
import { retryWhilePassing } from './start-retry.ts';

/** The longest wait for each step of stop(), ms. */
const STOP_STEP_MS = 3_000;

/** Waits for `work` to settle, or `ms` at most; never throws. */
async function settledWithin(work: Promise<unknown> | undefined, ms: number): Promise<void> {
  if (work === undefined) return;
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, ms);
    timer.unref();
  });
  await Promise.race([
    work.then(
      () => undefined,
      () => undefined,
    ),
    late,
  ]);
  clearTimeout(timer);
}

/** One record of the control topic as the follower hands it over. */
export interface ControlRecord {
  readonly key: string;
  /** UTF-8 value; null for a tombstone (the key is deleted). */
  readonly value: string | null;
  readonly offset: number;
}

export interface ControlTopicOptions {
  readonly brokers: readonly string[];
  readonly clientId: string;
  /** TLS and SASL, as every other client of ferry's has them. */
  readonly security?: KafkaSecurity;
  readonly topic: string;
  /** Prefix of the follower's own consumer group. */
  readonly groupPrefix: string;
  readonly logger: Logger;
  /** Longest wait of a fetch for new records; bounds nothing else. Default 500 ms. */
  readonly fetchMaxWaitMs?: number;
}

/**
 * Reads the control topic from its beginning, hands every record to `onRecord` in
 * offset order, and writes records with acks from all in-sync replicas.
 */
export class ControlTopic {
  readonly #options: ControlTopicOptions;
  readonly #kafka: Kafka;
  readonly #groupId: string;
  #consumer: Consumer | undefined;
  #producer: Producer | undefined;
  #admin: Admin | undefined;
  /** The offset after the last record handed over. */
  #next = 0;
  #waiters: { offset: number; resolve: () => void }[] = [];

  constructor(options: ControlTopicOptions) {
    // Control records are written uncompressed, but nothing stops another writer.
    registerCompressionCodecs();
    this.#options = options;
    this.#groupId = `${options.groupPrefix}.${randomUUID()}`;
    this.#kafka = new Kafka({
      ...kafkaConnection(options),
      logLevel: logLevel.WARN,
      logCreator: kafkaLogCreator(options.logger, 'control-topic'),
      retry: CLIENT_RETRY,
    });
  }

  /** The offset after the last record handed to `onRecord`. */
  get position(): number {
    return this.#next;
  }

  /**
   * Connects, then reads the topic from its beginning up to the end offset it has now,
   * handing each record to `onRecord`; resolves once that is done and keeps following.
   * @throws FerryError `kafka`; `illegal_state` when the topic has more than one
   *   partition (records would have no single order).
   */
  async start(onRecord: (record: ControlRecord) => void): Promise<void> {
    // A broker killed while the replica starts fails one of the reads below with a
    // connection reset; the whole start is tried again from a stopped state.
    await retryWhilePassing(() => this.#startOnce(onRecord), {
      onRetry: (attempt, error) =>
        this.#options.logger.warn(
          { attempt, err: error instanceof Error ? error.message : String(error) },
          'reading the control topic failed while Kafka is unsettled; trying again',
        ),
    });
  }

  async #startOnce(onRecord: (record: ControlRecord) => void): Promise<void> {
    const { topic } = this.#options;
    try {
      const admin = this.#kafka.admin();
      await admin.connect();
      this.#admin = admin;
      const offsets = await this.#endOffsets(admin);
      if (offsets.length !== 1) {
        throw new FerryError(
          'illegal_state',
          `the control topic ${topic} has ${offsets.length} partitions; it needs exactly 1 so that every replica reads its records in one order`,
          { retryable: false },
        );
      }
      const end = Number(offsets[0]?.high ?? 0);
      const producer = this.#kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
      await producer.connect();
      this.#producer = producer;
      // Read up to the end as it is now without a group: joining a new group waits the
      // broker's group.initial.rebalance.delay.ms (3 s by default), and start-up waits
      // for this read. The follower's group joins afterwards, in the background.
      const hand = (offset: number, key: Buffer | null, value: Buffer | null) => {
        if (offset < this.#next) return;
        onRecord({
          key: key?.toString('utf8') ?? '',
          value: value === null ? null : value.toString('utf8'),
          offset,
        });
        this.#advance(offset + 1);
      };
      const caughtUp = await readPartition(this.#kafka, topic, 0, this.#next, end, (record) =>
        hand(record.offset, record.key, record.value),
      );
      this.#advance(caughtUp);
      const consumer = this.#kafka.consumer({
        groupId: this.#groupId,
        maxWaitTimeInMs: this.#options.fetchMaxWaitMs ?? 500,
        readUncommitted: false,
        metadataMaxAge: CONSUMER_METADATA_MAX_AGE_MS,
      });
      this.#consumer = consumer;
      consumer.on(consumer.events.CRASH, (event) => {
        // kafkajs restarts the consumer after a retriable crash; otherwise this replica
        // no longer sees the fleet's changes, which an operator must learn from the log.
        // (The access check proved the follower's group may read, so a refusal is rare.)
        const log = event.payload.restart ? 'warn' : 'error';
        this.#options.logger[log](
          { err: event.payload.error.message, restart: event.payload.restart },
          'the control topic follower crashed',
        );
      });
      // Batches that compaction emptied never reach eachBatch; their end still counts.
      consumer.on(consumer.events.END_BATCH_PROCESS, (event) => {
        this.#advance(Number(event.payload.lastOffset) + 1);
      });
      await consumer.connect();
      await consumer.subscribe({ topics: [topic], fromBeginning: true });
      // Not awaited: run() resolves once the group is joined. Records written meanwhile
      // are read once it has joined; those read above are passed over.
      consumer
        .run({
          autoCommit: false,
          eachBatch: async ({ batch }) => {
            for (const message of batch.messages) {
              hand(Number(message.offset), message.key, message.value);
            }
          },
        })
        .catch((error: unknown) =>
          this.#options.logger.error(
            { err: error instanceof Error ? error.message : String(error) },
            'the control topic follower could not start',
          ),
        );
    } catch (error: unknown) {
      await this.stop();
      const what = `following the control topic ${topic} failed`;
      const need: AclNeed = kafkaRefusalOf(error)?.detail.startsWith('GROUP_')
        ? {
            resource: 'Group',
            name: this.#options.groupPrefix,
            pattern: 'prefixed',
            operations: ['Read'],
          }
        : { resource: 'Topic', name: topic, pattern: 'literal', operations: ['Read'] };
      throw this.#refusal(error, need, what) ?? kafkaError(error, what);
    }
  }

  /**
   * The topic's offsets. Right after the topic was created the broker may not lead its
   * partition yet (NOT_LEADER_FOR_PARTITION), and kafkajs's admin gives up on it without
   * refreshing its metadata: asked again for a few seconds.
   */
  async #endOffsets(admin: Admin): Promise<{ partition: number; high: string }[]> {
    const deadline = Date.now() + 10_000;
    while (true) {
      try {
        return await admin.fetchTopicOffsets(this.#options.topic);
      } catch (error: unknown) {
        const retriable = (error as { retriable?: unknown }).retriable === true;
        if (!retriable || Date.now() > deadline) throw error;
        await new Promise((resolve) => setTimeout(resolve, 300));
      }
    }
  }

  #advance(next: number): void {
    if (next <= this.#next) return;
    this.#next = next;
    const due = this.#waiters.filter((w) => w.offset < next);
    this.#waiters = this.#waiters.filter((w) => w.offset >= next);
    for (const waiter of due) waiter.resolve();
  }

  /** Resolves once the record at `offset` (and everything before it) was handed over. */
  applied(offset: number): Promise<void> {
    if (offset < this.#next) return Promise.resolve();
    return new Promise((resolve) => this.#waiters.push({ offset, resolve }));
  }

  /**
   * Writes one record (null value: a tombstone) and resolves with its offset once all
   * in-sync replicas have it. @throws FerryError `kafka`; `illegal_state` before start.
   */
  async write(key: string, value: string | null): Promise<number> {
    const producer = this.#producer;
    if (!producer) {
      throw new FerryError('illegal_state', 'the control topic is not started', {
        retryable: true,
      });
    }
    try {
      const [meta] = await producer.send({
        topic: this.#options.topic,
        acks: -1,
        messages: [{ key, value }],
      });
      if (!meta?.baseOffset) throw new Error('the broker returned no offset');
      return Number(meta.baseOffset);
    } catch (error: unknown) {
      const { topic } = this.#options;
      const what = `writing to the control topic failed (${key})`;
      const need: AclNeed = {
        resource: 'Topic',
        name: topic,
        pattern: 'literal',
        operations: ['Write'],
      };
      throw this.#refusal(error, need, what) ?? kafkaError(error, what);
    }
  }

  /** A refused ACL named with its grant; undefined for any other failure. */
  #refusal(error: unknown, need: AclNeed, what: string): FerryError | undefined {
    return aclRefusal(error, need, principalOf(this.#options.security), what);
  }

  /** Stops following, deletes the follower's group, disconnects. Idempotent. */
  async stop(): Promise<void> {
    const { consumer, producer, admin } = {
      consumer: this.#consumer,
      producer: this.#producer,
      admin: this.#admin,
    };
    this.#consumer = undefined;
    this.#producer = undefined;
    this.#admin = undefined;
    // Each step bounded: a follower restarting against a dead broker, or a coordinator
    // that moved, would otherwise hold the replica's stop for a minute of retries, past
    // its shutdown grace. The group is deleted only to keep the broker tidy.
    await settledWithin(consumer?.disconnect(), STOP_STEP_MS);
    await settledWithin(admin?.deleteGroups([this.#groupId]), STOP_STEP_MS);
    await settledWithin(admin?.disconnect(), STOP_STEP_MS);
    await settledWithin(producer?.disconnect(), STOP_STEP_MS);
  }
}
