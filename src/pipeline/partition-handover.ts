/**
 * The Kafka side of owning a partition: taking it over (fence, then read the group
 * offset and the send intent), committing a batch's records with the offset and the
 * intent, and clearing intents on a drained stop. What is learned goes into
 * PartitionOwnership; this module only talks to the group and the transactions.
 */

import type {
  GroupMembership,
  KafkaPort,
  LogBounds,
  OutboundRecord,
  PartitionOffset,
  RecordBatch,
} from '../kafka/kafka-port.ts';
import type { Logger } from '../observability/logger.ts';
import { pause } from './abortable.ts';
import type { Dedupe } from './dedupe.ts';
import type { PartitionOwnership } from './partition-ownership.ts';
import type { PartitionTransactions } from './partition-transactions.ts';
import { decodeSendIntent, encodeSendIntent, type SendIntent } from './send-intent.ts';

export interface PartitionHandoverOptions {
  readonly kafka: KafkaPort;
  readonly groupId: string;
  readonly transactions: PartitionTransactions;
  readonly ownership: PartitionOwnership;
  readonly logger: Logger;
  /** Names this process in the intents it writes and recognises its own. */
  readonly instanceId: string;
  /** This member's id in the group, from its last join. */
  readonly memberId: () => string | undefined;
  /** This member's group membership now (what a commit not of a fetched batch is fenced by). */
  readonly membership?: () => GroupMembership | undefined;
  /** How long another writer's sends can still be in flight, from the takeover (ms). */
  readonly inDoubtSettleMs: number;
  /** How long a fenced partition is left alone unless the group reassigns it (ms). */
  readonly fencedHoldMs: number;
  /** Duplicate suppression, when on: its records are read back at each takeover. */
  readonly dedupe?: Dedupe | undefined;
}

export class PartitionHandover {
  readonly #options: PartitionHandoverOptions;

  constructor(options: PartitionHandoverOptions) {
    this.#options = options;
  }

  /**
   * What this replica must know about a partition before its first batch in an
   * assignment, read only after a new transactional producer of the partition is
   * initialised: that fences the previous owner (a zombie can no longer commit) and
   * completes the partition's last transaction, whoever wrote it, so the group offset
   * read next is final. A read behind what this replica committed itself is refused.
   * The send intent found beside it is another writer's or this process's own; another
   * writer's sends are waited out, `inDoubtSettleMs` on this clock, before its range is
   * looked up (see PartitionOwnership.takenOver). `assignment` is the one its batch was
   * handed over in: what the takeover learns counts for that one only.
   */
  async takeOver(
    partition: number,
    signal: AbortSignal,
    assignment: number,
  ): Promise<'done' | 'not-owner' | 'unknown' | 'rebalancing'> {
    const { transactions, ownership, logger, instanceId, inDoubtSettleMs } = this.#options;
    // What this takeover reads holds for `assignment` (its batch's), and no later one.
    if (assignment !== ownership.assignment) return 'rebalancing';
    // Could not ask (the coordinator moved, a timeout) is not "out of the group": only
    // this partition waits, the others go on.
    const member = await this.stillMember().catch(() => 'unknown' as const);
    if (member === 'unknown') return 'unknown';
    if (!member) return 'not-owner';
    // Always a new producer, also for a partition this replica kept: only initialising one
    // waits for the partition's last transaction to complete, so that the offset read next
    // is not the one from before this replica's own last commit.
    try {
      await transactions.renew(partition);
    } catch (error: unknown) {
      // The previous transaction may still be completing (a broker that just restarted
      // writes its markers once it has loaded its log): this partition waits and tries again.
      logger.warn(
        { partition, err: error instanceof Error ? error.message : String(error) },
        "initialising the partition's producer failed; trying again",
      );
      return 'unknown';
    }
    let current: PartitionOffset | undefined;
    try {
      current = await transactions.committed(partition);
    } catch (error: unknown) {
      logger.warn(
        { partition, err: error instanceof Error ? error.message : String(error) },
        "reading the partition's group offset failed; trying again",
      );
      return 'unknown';
    }
    const committed = current && /^\d+$/.test(current.offset) ? BigInt(current.offset) : undefined;
    if (ownership.readBehind(partition, committed)) {
      logger.warn(
        { partition, read: current?.offset },
        'the group offset reads older than this replica committed it; reading it again',
      );
      return 'unknown';
    }
    if (this.#options.dedupe) {
      try {
        await this.#options.dedupe.restore(partition);
      } catch (error: unknown) {
        logger.warn(
          { partition, err: error instanceof Error ? error.message : String(error) },
          "reading the partition's dedupe records back failed; trying again",
        );
        return 'unknown';
      }
    }
    const stored = decodeSendIntent(current?.metadata);
    const intent =
      stored && committed !== undefined && BigInt(stored.untilOffset) >= committed
        ? stored
        : undefined;
    const own = intent?.by === instanceId;
    if (intent && !own) {
      logger.warn(
        { partition, untilOffset: intent.untilOffset, waitMs: inDoubtSettleMs },
        'taking over commands that may have reached the gateway; they are looked up before any resend',
      );
      if (!(await pause(inDoubtSettleMs, signal))) return 'rebalancing';
    }
    if (!ownership.takenOver(partition, { committed, intent, own, assignment })) {
      logger.info({ partition }, 'the group answered during the takeover: it is taken over again');
      return 'rebalancing';
    }
    return 'done';
  }

  /**
   * Commits records and the partition's offset (with the send intent still open, if
   * any, as its metadata) atomically.
   * @returns false when it could not, or the partition was taken away meanwhile.
   */
  async commit(
    batch: Pick<RecordBatch, 'partition' | 'isCurrent'> & {
      /**
       * What the lane's transaction is fenced by: the membership the batch was fetched
       * under, or `current` for an intent written at an assignment (the consumer's, once
       * its join returned).
       */
      readonly membership?: GroupMembership | 'current' | undefined;
    },
    records: readonly OutboundRecord[],
    offset: string,
    intent: SendIntent | undefined,
    generation: number,
    assignment: number,
  ): Promise<boolean> {
    const { transactions, ownership, logger, fencedHoldMs } = this.#options;
    const { partition } = batch;
    const outcome = await transactions.commit({
      partition,
      records,
      offset,
      metadata: intent ? encodeSendIntent(intent) : null,
      membership: membershipOf(batch.membership, () => this.membership()),
      // The partition may have moved while the commit waited for the lane's transaction
      // in flight: what was fetched (or an intent asked for) in an earlier assignment
      // is not sent under a later membership.
      stillCurrent: () => ownership.holds(partition, assignment),
      // The outcome may be unknown (a restarting broker can still complete it): the group
      // offset is read again before the next batch of the partition, whether this one
      // retries or not.
      uncertain: () => ownership.commitUncertain(partition),
      mayRetry: async () => {
        // It retries only while no rebalance may have given the partition to another
        // replica, and while this member still owns it.
        if (!batch.isCurrent() || generation !== ownership.generation) {
          logger.info({ partition }, 'not retrying the commit: the group changed meanwhile');
          return false;
        }
        if (await this.stillMember().catch(() => false)) {
          logger.info({ partition }, 'retrying the commit with a new producer');
          return true;
        }
        logger.info({ partition }, 'not retrying the commit: not a stable member of the group');
        ownership.rebalanceStarted();
        return false;
      },
    });
    if (outcome === 'fenced') {
      ownership.fenced(partition, fencedHoldMs, assignment);
      ownership.rebalanceStarted();
      logger.warn({ partition }, 'fenced by another replica: leaving the partition to it');
    }
    return outcome === 'committed';
  }

  /** Where the partition's log starts and ends, or undefined when it cannot be read now. */
  async logBounds(partition: number): Promise<LogBounds | undefined> {
    try {
      return await this.#options.transactions.logBounds(partition);
    } catch (error: unknown) {
      this.#options.logger.debug(
        { partition, err: error instanceof Error ? error.message : String(error) },
        "reading where the partition's log starts and ends failed",
      );
      return undefined;
    }
  }

  /** The group membership the consumer holds now, when known. */
  membership(): GroupMembership | undefined {
    return this.#options.membership?.();
  }

  /** Whether the group is stable with this member in it (see KafkaClient.isStableMember). */
  stillMember(): Promise<boolean> {
    return this.#options.kafka.isStableMember(this.#options.groupId, this.#options.memberId());
  }

  /**
   * After a drained stop nothing of this replica is in flight: the intents that
   * cover offsets ahead are cleared, so the next owner need not wait and look up.
   */
  async clearIntents(): Promise<void> {
    await Promise.all(
      this.#options.ownership
        .releasable()
        .map(({ partition, topic, offset }) => this.clearIntent(partition, topic, offset)),
    );
  }

  /**
   * Commits the group offset `offset`, which this replica committed last, again without
   * its intent: nothing of this replica is in flight on the partition, so its next owner
   * need not wait or look anything up. Never throws; false when it did not happen.
   */
  async clearIntent(partition: number, topic: string, offset: string): Promise<boolean> {
    const { transactions, ownership, logger, groupId } = this.#options;
    // Only with the producer this replica committed through: a new one would fence
    // whoever owns the partition now and roll its offset back to this replica's. If
    // another replica initialised the partition meanwhile, this one is fenced and the
    // commit is refused.
    const existing = transactions.existing(partition);
    if (!existing) return false;
    // Whatever happens to the commit, nothing sends under the old intent any more.
    ownership.intentCleared(partition);
    try {
      const producer = await existing;
      await producer.commit([], groupId, [{ topic, partition, offset, metadata: null }]);
      return true;
    } catch (error: unknown) {
      logger.debug(
        { partition, err: error instanceof Error ? error.message : String(error) },
        'clearing the send intent failed; the next owner looks its range up',
      );
      return false;
    }
  }
}

/** A batch's own membership (undefined stays undefined: never another), or the current one. */
function membershipOf(
  fetchedUnder: GroupMembership | 'current' | undefined,
  current: () => GroupMembership | undefined,
): () => GroupMembership | undefined {
  return fetchedUnder === 'current' ? current : () => fetchedUnder;
}
