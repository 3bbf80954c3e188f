/** ferry's producers: plain acknowledged sends and per-partition transactions. */
import { setTimeout as sleep } from 'node:timers/promises';
import { PartitionAssigner, type PartitionCount, sendAcknowledged } from './acknowledged-send.ts';
import { whileCoordinatorMoves } from './coordinator-errors.ts';
import { fenceOffsetsByGeneration } from './generation-fenced-commits.ts';
import type { MembershipSource } from './kafka-port.ts';
import { kafkaError } from './kafka-security.ts';
import type { CompressionTypes, Producer } from './kafkajs.ts';
import {
  MAX_PRODUCE_REQUEST_BYTES,
  type OutboundRecord,
  type PartitionOffset,
  produceChunks,
  toKafkaMessages,
} from './records.ts';
import { boundedRetry } from './retry-budget.ts';
import { retryWhilePassing } from './start-retry.ts';

/**
 * Retries of the transactional producers. A transaction begun right after the previous
 * commit is answered CONCURRENT_TRANSACTIONS while the broker still writes the previous
 * one's markers, which takes a few milliseconds; kafkajs retries it after the client's
 * `initialRetryTime` (the transaction manager's own calls know no other), so with 300 ms
 * one batch in ten waited 250–380 ms for nothing. Commits of a partition follow each
 * other back to back under load, so the retries start at 2 ms and grow by half each
 * time (doubling overshot: a 5 ms wait missed by a little cost 10 ms more), each wait
 * capped at 2 s so that a broker back after a restart is used again within it, as many
 * as keep about a minute of patience in all (retry-budget.ts). ferry's own retry of a
 * transaction's first step (`sendOffsetsRetrying`) follows the same schedule, for a few
 * seconds (`BUSY_RETRIES`).
 */
export const TRANSACTION_RETRY = boundedRetry(2, 1.5, 60_000);

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
    await retryWhilePassing(() => this.#producer.connect(), {
      undo: () => this.#producer.disconnect(),
    });
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

/**
 * Times a busy coordinator is asked again within one commit (about 6 s in all): markers
 * take milliseconds to write, so longer means something else is wrong, and the commit
 * fails to its caller, which may try again with a check of what committed.
 */
export const BUSY_RETRIES = 18;

/** The wait before the `attempt`th retry (from 0) of a step the coordinator answered busy. */
export function busyRetryWaitMs(attempt: number): number {
  const { initialRetryTime, multiplier, maxRetryTime } = TRANSACTION_RETRY;
  return Math.min(maxRetryTime, Math.ceil(initialRetryTime * multiplier ** attempt));
}

/** Called before a busy coordinator is asked again. */
export type BusyRetryListener = (attempt: number, waitMs: number) => void;

/**
 * Adds the group's offsets to the open transaction (AddOffsetsToTxn, then
 * TxnOffsetCommit), retrying what kafkajs does not:
 * - CONCURRENT_TRANSACTIONS: this is a transaction's first step (see `commit`), so it
 *   meets the previous transaction's markers still being written; asked again after
 *   milliseconds (TRANSACTION_RETRY's schedule), up to BUSY_RETRIES times.
 * - a coordinator that moved, is loading or was not reached (`whileCoordinatorMoves`). For
 *   code 16 kafkajs looks for the type `NOT_COORDINATOR` while its own error table names
 *   it `NOT_COORDINATOR_FOR_GROUP`, so without this the answer would abort the
 *   transaction. It is what a coordinator says after a broker restart, or for a group's
 *   first commit; the coordinator cache drops the node, and the next try looks it up.
 * Adding the group's offsets to a transaction again is allowed.
 */
async function sendOffsetsRetrying(
  send: () => Promise<void>,
  onBusy: BusyRetryListener,
): Promise<void> {
  // One budget of busy retries for the whole step, across the coordinator's moves.
  let busy = 0;
  await whileCoordinatorMoves(async () => {
    for (;;) {
      try {
        return await send();
      } catch (error: unknown) {
        const type = (error as { type?: unknown } | null)?.type;
        if (type !== 'CONCURRENT_TRANSACTIONS' || busy >= BUSY_RETRIES) throw error;
        const waitMs = busyRetryWaitMs(busy);
        onBusy(busy, waitMs);
        busy += 1;
        await sleep(waitMs);
      }
    }
  });
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
  readonly #onBusy: BusyRetryListener;
  /** Removes the membership this producer's offsets carry, when one was given. */
  #unfence: (() => void) | undefined;
  readonly transactionalId: string;
  constructor(
    producer: Producer,
    transactionalId: string,
    compression: CompressionTypes,
    partitionCount: PartitionCount,
    maxRequestBytes = MAX_PRODUCE_REQUEST_BYTES,
    onResend: (partitions: readonly string[]) => void = () => undefined,
    onBusy: BusyRetryListener = () => undefined,
  ) {
    this.#producer = producer;
    this.#onBusy = onBusy;
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
    // Not retried here: a takeover renews its producer and must stay abortable by a
    // rebalance, which its own caller's retries are.
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
      // Offsets first: the transaction's first request meets the previous transaction's
      // markers still being written (CONCURRENT_TRANSACTIONS). Were it the records'
      // AddPartitionsToTxn, kafkajs would refresh the metadata before each retry (a
      // round trip, and a request the broker pays for); this step is retried here.
      // A transaction of records alone (final status events) has no offsets to send.
      if (offsets.length > 0) {
        await sendOffsetsRetrying(
          () =>
            transaction.sendOffsets({
              consumerGroupId: groupId,
              topics: offsets.map((o) => ({
                topic: o.topic,
                partitions: [
                  { partition: o.partition, offset: o.offset, metadata: o.metadata ?? null },
                ],
              })),
            }),
          this.#onBusy,
        );
      }
      for (const chunk of produceChunks(records, this.#maxRequestBytes)) {
        await sendAcknowledged(
          (batch) => transaction.sendBatch(batch),
          await this.#partitions.assign(toKafkaMessages(chunk)),
          { acks: -1, compression: this.#compression },
          this.#onResend,
        );
      }
      await transaction.commit();
    } catch (error: unknown) {
      if (transaction.isActive()) await transaction.abort().catch(() => undefined);
      throw kafkaError(error, 'the result transaction failed');
    }
  }
  /**
   * From now on the offsets this producer commits carry the consumer group membership that
   * `membership` gives at each commit (TxnOffsetCommit v3): the group coordinator refuses
   * them once the group has moved on from that member or generation, and the transaction
   * fails whole. Without it, offsets are fenced only by this transactional id's epoch.
   * @throws FerryError `kafka` when kafkajs's internals are not where expected.
   */
  fenceOffsetsBy(membership: MembershipSource): void {
    this.#unfence?.();
    this.#unfence = fenceOffsetsByGeneration(this.transactionalId, membership);
  }
  async disconnect(): Promise<void> {
    this.#unfence?.();
    this.#unfence = undefined;
    await this.#producer.disconnect();
  }
}
