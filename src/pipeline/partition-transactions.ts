import { setTimeout as sleep } from 'node:timers/promises';
import type {
  KafkaPort,
  LogBounds,
  MembershipSource,
  OutboundRecord,
  PartitionOffset,
  PartitionProducer,
} from '../kafka/kafka-port.ts';
import type { Logger } from '../observability/logger.ts';
import type { FerryMetrics } from '../observability/metrics.ts';
import type { LaneTransactions } from './lane-transactions.ts';
import { PartitionWorkers } from './partition-worker.ts';

const COMMIT_ATTEMPTS = 5;
/** kafkajs texts of the broker errors that mean another producer took this transactional id. */
const FENCED = /old epoch|fenced|INVALID_PRODUCER_EPOCH|PRODUCER_FENCED/i;
/** kafkajs text of CONCURRENT_TRANSACTIONS: the previous transaction is still completing. */
const CONCURRENT_TRANSACTIONS = /another concurrent operation on the same transaction/i;

export interface PartitionTransactionsOptions {
  readonly kafka: KafkaPort;
  readonly groupId: string;
  /** The input topic whose partitions the transactional ids follow. */
  readonly topic: string;
  /** Stable across restarts, so a restarted replica fences its predecessor. */
  readonly transactionalIdPrefix: string;
  readonly logger: Logger;
  readonly metrics: FerryMetrics;
  /** Each partition's worker, where its transactional producer lives (default: its own). */
  readonly workers?: PartitionWorkers;
  /**
   * FERRY_TRANSACTIONS=lane: commits go through the lane's one producer, fenced by the
   * group membership of their batches. The partition's own
   * producer is still initialised at each takeover: it fences a replica that commits
   * through the partition's id (one of the earlier version, during a rolling upgrade).
   */
  readonly lane?: LaneTransactions | undefined;
  /** How long a stable offset read waits for another producer's transaction to end, ms. */
  readonly stableWaitMs?: number;
}

/** Default of PartitionTransactionsOptions.stableWaitMs. */
const STABLE_WAIT_MS = 3_000;

export interface CommitRequest {
  readonly partition: number;
  readonly records: readonly OutboundRecord[];
  /** The group offset to commit, and the metadata stored with it. */
  readonly offset: string;
  readonly metadata: string | null;
  /** An attempt failed and its outcome may be unknown (called at once, before any wait). */
  readonly uncertain?: () => void;
  /**
   * Asked after an attempt whose outcome may be unknown, before a new producer is
   * initialised (which fences whoever holds the transactional id): false gives up.
   */
  readonly mayRetry: () => Promise<boolean>;
  /** The group membership its batches were handed over under (what a lane commit is fenced by). */
  readonly membership?: MembershipSource | undefined;
  /** Whether its batches may still commit: asked again when a lane transaction is put together. */
  readonly stillCurrent?: (() => boolean) | undefined;
}

/** Waits before the commit's next attempt (200 ms doubling, at most 5 s), then asks whether it may go on. */
async function waitToRetry(request: CommitRequest, attempt: number): Promise<boolean> {
  await sleep(Math.min(5_000, 200 * 2 ** attempt));
  return request.mayRetry();
}

/** The transactional id of a command partition's result transactions. */
export function partitionTransactionalId(
  prefix: string,
  groupId: string,
  topic: string,
  partition: number,
): string {
  return `${prefix}-${groupId}-${topic}-${partition}`;
}

/** `fenced`: another producer holds the partition's transactional id now. */
export type CommitOutcome = 'committed' | 'fenced' | 'failed';

/**
 * One transactional producer per input partition: records and the group
 * offset of that partition commit together or not at all, and initialising the
 * producer fences any other holder of the same id and completes its transaction.
 */
export class PartitionTransactions {
  readonly #options: PartitionTransactionsOptions;

  readonly #workers: PartitionWorkers;

  constructor(options: PartitionTransactionsOptions) {
    this.#options = options;
    this.#workers = options.workers ?? new PartitionWorkers();
  }

  /**
   * The partition's producer if this replica has one already, never a new one: a new
   * producer fences whoever holds the partition now.
   */
  existing(partition: number): Promise<PartitionProducer> | undefined {
    return this.#workers.find(partition)?.producer;
  }

  /** The partition's producer, created and initialised (fencing others) on first use. */
  producer(partition: number): Promise<PartitionProducer> {
    const worker = this.#workers.get(partition);
    let producer = worker.producer;
    if (!producer) {
      const { kafka, transactionalIdPrefix, groupId, topic } = this.#options;
      const created = kafka.createTransactionalProducer(
        partitionTransactionalId(transactionalIdPrefix, groupId, topic, partition),
      );
      producer = created.connect().then(() => created);
      const connecting = producer;
      // A producer that failed to initialise is forgotten, unless a newer one replaced it.
      connecting.catch(() => {
        if (worker.producer === connecting) worker.producer = undefined;
      });
      worker.producer = connecting;
    }
    return producer;
  }

  /**
   * A new producer for the partition, the one it had closed first. Initialising it waits
   * until the id's last transaction is complete, this replica's own included: EndTxn
   * returns before the coordinator writes its markers, and until then the group offset
   * reads as it was before that transaction.
   */
  async renew(partition: number): Promise<PartitionProducer> {
    await this.close([partition]);
    return this.producer(partition);
  }

  /**
   * The group's committed offset (with metadata) of one partition, read stable: once no
   * open transaction holds it. A partition's own id, initialised at a takeover, ends the
   * transactions of replicas that commit through it; a replica committing through its
   * lane's id (FERRY_TRANSACTIONS=lane) is waited out here, whichever mode this replica
   * runs in, so replicas of both modes can share a group while a deploy switches it.
   */
  async committed(partition: number): Promise<PartitionOffset | undefined> {
    const { kafka, groupId, topic, lane } = this.#options;
    // This replica's own last lane transaction may be open still (its EndTxn lost): a new
    // lane producer ends it, so the read waits for another replica's only.
    if (lane) await lane.ready();
    const waitMs = this.#options.stableWaitMs ?? STABLE_WAIT_MS;
    return (await kafka.stableOffsets(groupId, topic, [partition], waitMs)).get(partition);
  }

  /** Where the partition's log starts and ends now. */
  async logBounds(partition: number): Promise<LogBounds | undefined> {
    const { kafka, topic } = this.#options;
    return (await kafka.logBounds(topic)).get(partition);
  }

  /**
   * Commits records and the offset in one transaction; retries, after an unknown
   * outcome with a new producer once `mayRetry` agrees, and first checks whether
   * the failed attempt committed after all.
   */
  async commit(request: CommitRequest): Promise<CommitOutcome> {
    if (this.#options.lane) return this.#commitInLane(this.#options.lane, request);
    const { partition, records, offset, metadata } = request;
    const offsets = [{ topic: this.#options.topic, partition, offset, metadata }];
    const log = this.#options.logger;
    for (let attempt = 1; attempt <= COMMIT_ATTEMPTS; attempt += 1) {
      try {
        // Only a takeover, or a retry `mayRetry` allowed, creates a producer: creating one
        // fences whoever holds the transactional id. A commit that finds the partition's
        // producer closed (the partition was given up meanwhile) does not happen.
        const producer = await (attempt === 1
          ? this.existing(partition)
          : this.producer(partition));
        if (!producer) {
          log.info({ partition }, 'no producer for the partition: it was given up; not committing');
          return 'failed';
        }
        // A transaction whose answer was lost may have committed: the new producer's
        // initialisation completed it, so the group offset now tells.
        if (attempt > 1 && (await this.#alreadyCommitted(partition, offset, metadata))) {
          return 'committed';
        }
        await producer.commit(records, this.#options.groupId, offsets);
        return 'committed';
      } catch (error: unknown) {
        const message = error instanceof Error ? error.message : String(error);
        this.#options.metrics.kafkaErrors.inc({ client: 'producer', kind: 'transaction' });
        if (CONCURRENT_TRANSACTIONS.test(message) && attempt < COMMIT_ATTEMPTS) {
          // The previous transaction's markers are still being written: nothing of this
          // one started, so the same producer tries again shortly.
          log.debug({ partition, attempt }, 'transaction coordinator busy; retrying');
          await sleep(25 * attempt);
          continue;
        }
        log.warn({ partition, attempt, err: message }, 'result transaction failed');
        await this.close([partition]);
        if (FENCED.test(message)) return 'fenced';
        // The outcome may be unknown: from now on the partition's next batch reads the group
        // offset again first, whether or not this commit is retried.
        request.uncertain?.();
        if (attempt === COMMIT_ATTEMPTS) return 'failed';
        // Asked after the wait, right before a new producer fences whoever holds the id:
        // the group may have moved the partition during the wait.
        if (!(await waitToRetry(request, attempt))) return 'failed';
      }
    }
    return 'failed';
  }

  /**
   * The lane's commit of the partition's records and offset, retried as `commit` retries;
   * a refusal of the batches' membership means the group has moved on (`fenced`).
   */
  async #commitInLane(lane: LaneTransactions, request: CommitRequest): Promise<CommitOutcome> {
    const { partition, records, offset, metadata } = request;
    const log = this.#options.logger;
    const committing = { topic: this.#options.topic, partition, offset, metadata };
    for (let attempt = 1; attempt <= COMMIT_ATTEMPTS; attempt += 1) {
      // The partition's producer goes with its ownership: without it the partition was
      // given up meanwhile, and nothing of it commits here.
      if (!this.existing(partition)) {
        log.info({ partition }, 'the partition was given up; not committing');
        return 'failed';
      }
      try {
        // The failed attempt's transaction may have committed: once the lane's new producer
        // completed or aborted it (`committed` waits for that), the stable offset tells.
        if (attempt > 1 && (await this.#alreadyCommitted(partition, offset, metadata))) {
          return 'committed';
        }
      } catch (error: unknown) {
        log.warn(
          { partition, attempt, err: error instanceof Error ? error.message : String(error) },
          'checking what the failed commit did failed',
        );
        if (attempt === COMMIT_ATTEMPTS) return 'failed';
        if (!(await waitToRetry(request, attempt))) return 'failed';
        continue;
      }
      const outcome = await lane.commit({
        records,
        offset: committing,
        membership: request.membership ?? (() => undefined),
        stillCurrent: () =>
          this.existing(partition) !== undefined && (request.stillCurrent?.() ?? true),
      });
      if (outcome === 'committed') return 'committed';
      if (outcome === 'refused') return 'fenced';
      // Nothing was sent: the batches were handed over, or the intent asked for, while
      // the member was joining, or the partition moved while the commit waited; they are
      // read again.
      if (outcome === 'unfenced') return 'failed';
      request.uncertain?.();
      if (attempt === COMMIT_ATTEMPTS) return 'failed';
      if (!(await waitToRetry(request, attempt))) return 'failed';
    }
    return 'failed';
  }

  async #alreadyCommitted(
    partition: number,
    offset: string,
    metadata: string | null,
  ): Promise<boolean> {
    const committed = await this.committed(partition);
    return committed?.offset === offset && (committed.metadata ?? null) === metadata;
  }

  /** The partitions that have a producer (owned now or recently). */
  get partitions(): number[] {
    return [...this.#workers].flatMap((worker) =>
      worker.producer === undefined ? [] : [worker.partition],
    );
  }

  async close(partitions: readonly number[] = this.partitions): Promise<void> {
    await Promise.all(
      partitions.map(async (partition) => {
        const worker = this.#workers.find(partition);
        const producer = worker?.producer;
        if (worker) worker.producer = undefined;
        await producer?.then((p) => p.disconnect()).catch(() => undefined);
      }),
    );
  }
}
