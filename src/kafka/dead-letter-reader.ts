/**
 * The dead-letter topic for replay (src/admin/dead-letter-replay.ts): reads a
 * range of it at read_committed and commits replayed records together with the
 * replay's progress in one Kafka transaction. Like kafka-client.ts, a place
 * where kafkajs is imported.
 *
 * Progress lives in its own consumer group (`progressGroupId`): its committed
 * offset per partition plus the offset-commit metadata (written inside the
 * transaction with TxnOffsetCommit). A range is read by dead-letter-scan.ts, through a
 * throwaway group positioned with `setOffsets` before it joins, deleted afterwards.
 */
import type {
  DeadLetter,
  DeadLetterLog,
  PartitionProgress,
  ReplayRecord,
  ScanVerdict,
} from '../admin/dead-letter-replay.ts';
import type { KafkaSecurity } from '../config/kafka-security.ts';
import { FerryError } from '../errors.ts';
import type { Logger } from '../observability/logger.ts';
import { registerCompressionCodecs } from './compression.ts';
import { whileCoordinatorMoves } from './coordinator-errors.ts';
import { scanDeadLetters } from './dead-letter-scan.ts';
import { kafkaConnection, kafkaError } from './kafka-security.ts';
import { type Admin, Kafka, logLevel, type Producer } from './kafkajs.ts';
import { kafkaLogCreator } from './kafkajs-adapters.ts';
import { boundedRetry } from './retry-budget.ts';

const PROGRESS_VISIBLE_TIMEOUT_MS = 10_000;

export interface DeadLetterReaderOptions {
  readonly brokers: readonly string[];
  /** Default `ferry-dlq-replay`. */
  readonly clientId?: string;
  readonly logger: Logger;
  /** TLS and SASL settings; plaintext without. */
  readonly security?: KafkaSecurity;
  /** The dead-letter topic (FERRY_TOPIC_DLQ). */
  readonly deadLetterTopic: string;
  /** Where replayed commands go (FERRY_TOPIC_COMMANDS). */
  readonly commandsTopic: string;
  /** The consumer group that holds replay progress, e.g. `${FERRY_KAFKA_GROUP}.dlq-replay`. */
  readonly progressGroupId: string;
  /** Gives up a scan that makes no progress for this long. Default 30 000 ms. */
  readonly scanIdleTimeoutMs?: number;
}

/** DeadLetterLog over kafkajs. Call `close()` when done. */
export class DeadLetterReader implements DeadLetterLog {
  readonly #kafka: Kafka;
  readonly #options: DeadLetterReaderOptions;
  /** Promises, so concurrent first calls share one connection. */
  #admin: Promise<Admin> | undefined;
  #producer: Promise<Producer> | undefined;

  constructor(options: DeadLetterReaderOptions) {
    // Dead letters are written with FERRY_KAFKA_COMPRESSION, which may be any codec.
    registerCompressionCodecs();
    this.#options = options;
    this.#kafka = new Kafka({
      ...kafkaConnection({ ...options, clientId: options.clientId ?? 'ferry-dlq-replay' }),
      logLevel: logLevel.WARN,
      logCreator: kafkaLogCreator(options.logger, 'dead-letter-reader'),
      // Its patience as before (about 19 s), each wait capped (retry-budget.ts).
      retry: boundedRetry(300, 2, 19_000),
    });
  }

  #adminClient(): Promise<Admin> {
    if (!this.#admin) {
      const admin = this.#kafka.admin();
      this.#admin = admin.connect().then(() => admin);
      this.#admin.catch(() => {
        this.#admin = undefined;
      });
    }
    return this.#admin;
  }

  async progress(): Promise<Map<number, PartitionProgress>> {
    try {
      const admin = await this.#adminClient();
      // kafkajs's fetchOffsets gives up on a group coordinator that just moved or still
      // loads the group (a broker restart, a new cluster): asked again shortly.
      const answer = await whileCoordinatorMoves(() =>
        admin.fetchOffsets({
          groupId: this.#options.progressGroupId,
          topics: [this.#options.deadLetterTopic],
        }),
      );
      const result = new Map<number, PartitionProgress>();
      for (const p of answer[0]?.partitions ?? []) {
        const offset = Number(p.offset);
        if (offset >= 0) result.set(p.partition, { offset, metadata: p.metadata ?? null });
      }
      return result;
    } catch (error: unknown) {
      throw kafkaError(error, 'reading the dead-letter replay progress failed');
    }
  }

  async endOffsets(): Promise<Map<number, number>> {
    try {
      const admin = await this.#adminClient();
      const offsets = await admin.fetchTopicOffsets(this.#options.deadLetterTopic);
      return new Map(offsets.map((o) => [o.partition, Number(o.high)]));
    } catch (error: unknown) {
      throw kafkaError(error, 'reading the dead-letter topic end offsets failed');
    }
  }

  async scan(
    from: ReadonlyMap<number, number>,
    to: ReadonlyMap<number, number>,
    visit: (record: DeadLetter) => ScanVerdict,
    signal?: AbortSignal,
  ): Promise<Map<number, number>> {
    const source = {
      kafka: this.#kafka,
      admin: () => this.#adminClient(),
      topic: this.#options.deadLetterTopic,
      progressGroupId: this.#options.progressGroupId,
      idleTimeoutMs: this.#options.scanIdleTimeoutMs ?? 30_000,
    };
    return scanDeadLetters(source, from, to, visit, signal);
  }

  #transactionalProducer(): Promise<Producer> {
    if (!this.#producer) {
      // One transactional id per progress group: a second replayer elsewhere fences this one.
      const producer = this.#kafka.producer({
        transactionalId: `${this.#options.progressGroupId}.producer`,
        idempotent: true,
        maxInFlightRequests: 1,
      });
      this.#producer = producer.connect().then(() => producer);
      this.#producer.catch(() => {
        this.#producer = undefined;
      });
    }
    return this.#producer;
  }

  /**
   * A new producer of the replay's transactional id, initialised now: that bumps the
   * id's epoch, so a replay in progress elsewhere (or an earlier one here) is refused
   * at its next commit, before this one reads the progress.
   */
  async begin(): Promise<void> {
    const previous = this.#producer;
    this.#producer = undefined;
    await previous?.then((p) => p.disconnect()).catch(() => undefined);
    try {
      const producer = await this.#transactionalProducer();
      // kafkajs sends InitProducerId with the transactional id only at a first
      // transaction; nothing is added to this one, so its abort stays local.
      const transaction = await producer.transaction();
      await transaction.abort();
    } catch (error: unknown) {
      this.#producer = undefined;
      throw kafkaError(error, 'taking the dead-letter replay over failed');
    }
  }

  async commit(
    records: readonly ReplayRecord[],
    progress: ReadonlyMap<number, PartitionProgress>,
  ): Promise<void> {
    const producer = await this.#transactionalProducer().catch((error: unknown) => {
      throw kafkaError(error, 'connecting the replay producer failed');
    });
    const transaction = await producer.transaction();
    try {
      if (records.length > 0) {
        await transaction.send({
          topic: this.#options.commandsTopic,
          acks: -1,
          messages: records.map((r) => ({ key: r.key, value: r.value, headers: { ...r.headers } })),
        });
      }
      if (progress.size > 0) {
        await transaction.sendOffsets({
          consumerGroupId: this.#options.progressGroupId,
          topics: [
            {
              topic: this.#options.deadLetterTopic,
              // kafkajs passes `metadata` through to TxnOffsetCommit; its typings omit it.
              partitions: [...progress].map(([partition, p]) => ({
                partition,
                offset: String(p.offset),
                metadata: p.metadata,
              })),
            },
          ],
        });
      }
      await transaction.commit();
    } catch (error: unknown) {
      if (transaction.isActive()) await transaction.abort().catch(() => undefined);
      // A fenced or broken producer cannot be reused.
      this.#producer = undefined;
      await producer.disconnect().catch(() => undefined);
      const message = error instanceof Error ? error.message : String(error);
      if (/old epoch|fenced|INVALID_PRODUCER_EPOCH|PRODUCER_FENCED/i.test(message)) {
        throw new FerryError(
          'illegal_state',
          'another dead-letter replay took over (on this or another replica); this one stopped, and what it had not committed is left for that one',
          { cause: error, retryable: false },
        );
      }
      throw kafkaError(error, 'committing the dead-letter replay failed');
    }
    await this.#untilVisible(progress);
  }

  /**
   * EndTxn returns before the coordinator has written the commit markers, and an
   * OffsetFetch without `require_stable` (kafkajs sends none) answers the previous
   * offsets until then: the next replay must not start from those.
   */
  async #untilVisible(progress: ReadonlyMap<number, PartitionProgress>): Promise<void> {
    const deadline = Date.now() + PROGRESS_VISIBLE_TIMEOUT_MS;
    while (progress.size > 0) {
      const seen = await this.progress();
      const visible = [...progress].every(([partition, expected]) => {
        const current = seen.get(partition);
        return current?.offset === expected.offset && current.metadata === expected.metadata;
      });
      if (visible) return;
      if (Date.now() > deadline) {
        throw new FerryError(
          'kafka',
          'the dead-letter replay progress did not become visible in time',
        );
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  async close(): Promise<void> {
    const producer = this.#producer;
    const admin = this.#admin;
    this.#producer = undefined;
    this.#admin = undefined;
    await (await producer?.catch(() => undefined))?.disconnect();
    await (await admin?.catch(() => undefined))?.disconnect();
  }
}
