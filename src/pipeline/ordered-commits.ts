/**
 * Per partition, the batches whose commands are out, committed strictly in fetch order.
 * A batch's sends may go out while earlier batches of its partition still wait for
 * answers or commit; its commit waits for theirs. When the oldest batch is answered,
 * it is committed together with every batch behind it that is answered too: one
 * transaction instead of several, with no extra wait. Named transitions: `push` (a
 * batch's commands were handed out), a commit of the oldest answered batches, and a
 * failure, after which nothing queued is committed here (the partition is read again
 * from the oldest one, see `failed`).
 *
 * A partition's next commit begins at least `minGapMs` after its previous one ended.
 * Kafka answers a commit before it has written the transaction's markers, and a
 * transaction begun meanwhile is refused (CONCURRENT_TRANSACTIONS) and retried: a
 * commit begun at once would mostly wait anyway, in retries that cost the broker
 * requests. Batches answered during the gap join that commit instead of each making a
 * transaction of its own.
 */

import { setTimeout as sleep } from 'node:timers/promises';
import { ownStates, type PartitionStates, whenAllIdle } from './partition-states.ts';

/** A batch in the queue: it knows when every one of its commands has an outcome. */
export interface Committable {
  /** Settles (never rejects) when every command has an outcome or the batch gave up. */
  readonly ready: Promise<void>;
  /** Whether `ready` has settled. */
  isReady(): boolean;
}

export interface OrderedCommitsOptions<T extends Committable> {
  /** Commits these answered batches, oldest first, in one transaction. @returns whether it committed. */
  readonly commit: (partition: number, batches: readonly T[]) => Promise<boolean>;
  /** Committed: their results are visible. */
  readonly committed: (partition: number, batches: readonly T[]) => void;
  /**
   * A commit did not happen: these batches (the ones that failed and every one behind
   * them, oldest first) are not committed here; their partition is read again from the
   * oldest one's first record.
   */
  readonly failed: (partition: number, batches: readonly T[]) => void;
  /**
   * Whether an answered batch can commit at all. A commit takes the answered batches at
   * the front of the queue up to the first that cannot (which then commits, and fails,
   * on its own): the batches before it are not read again for its sake. Default: all can.
   */
  readonly canCommit?: (batch: T) => boolean;
  /** Least time between the end of a partition's commit and the start of its next, ms. Default 0. */
  readonly minGapMs?: number;
  /** Where each partition's queue is kept (default: a map of its own). */
  readonly queues?: PartitionStates<CommitQueue<T>>;
}

/** One partition's batches to commit, its drain in progress, and when its last commit ended. */
export interface CommitQueue<T> {
  readonly queue: T[];
  running: Promise<void> | undefined;
  /** performance.now() when the partition's last commit ended. */
  lastEnd: number;
}

export function newCommitQueue<T>(): CommitQueue<T> {
  return { queue: [], running: undefined, lastEnd: Number.NEGATIVE_INFINITY };
}

export class OrderedCommits<T extends Committable> {
  readonly #options: OrderedCommitsOptions<T>;
  readonly #queues: PartitionStates<CommitQueue<T>>;

  constructor(options: OrderedCommitsOptions<T>) {
    this.#options = options;
    this.#queues = options.queues ?? ownStates(() => newCommitQueue<T>());
  }

  /** A batch's commands were handed out: it commits after every batch pushed before it. */
  push(partition: number, batch: T): void {
    const state = this.#queues.get(partition);
    state.queue.push(batch);
    // `#drain` forgets itself in the same step that finds its queue empty, so a batch
    // pushed at any later moment starts a drain of its own and is never left behind.
    state.running ??= this.#drain(partition, state);
  }

  /** Whether batches of the partition are waiting for answers or committing. */
  busy(partition: number): boolean {
    return (this.#queues.find(partition)?.queue.length ?? 0) > 0;
  }

  /** What the partition's queue holds: batches, and whether the oldest has every answer. */
  describe(partition: number): { queued: number; oldestReady: boolean | undefined } {
    const queue = this.#queues.find(partition)?.queue ?? [];
    return { queued: queue.length, oldestReady: queue[0]?.isReady() };
  }

  /** Settles when the partition has nothing left to commit. */
  async idle(partition: number): Promise<void> {
    const state = this.#queues.find(partition);
    while (state?.running) await state.running;
  }

  /** Settles when no partition has anything left to commit. */
  idleAll(): Promise<void> {
    return whenAllIdle(this.#queues);
  }

  async #drain(partition: number, state: CommitQueue<T>): Promise<void> {
    const { queue } = state;
    try {
      while (queue.length > 0) {
        const oldest = queue[0] as T;
        await oldest.ready;
        const gap = this.#options.minGapMs ?? 0;
        const since = performance.now() - state.lastEnd;
        if (since < gap) await sleep(gap - since);
        const canCommit = this.#options.canCommit ?? (() => true);
        let count = 1;
        if (canCommit(oldest)) {
          while (
            count < queue.length &&
            (queue[count] as T).isReady() &&
            canCommit(queue[count] as T)
          ) {
            count += 1;
          }
        }
        const batches = queue.slice(0, count);
        let committed = false;
        try {
          committed = await this.#options.commit(partition, batches);
        } catch {
          committed = false;
        }
        state.lastEnd = performance.now();
        if (committed) {
          queue.splice(0, count);
          this.#options.committed(partition, batches);
        } else {
          this.#options.failed(partition, queue.splice(0));
        }
      }
    } finally {
      // In the same step that found the queue empty: no await may come between.
      state.running = undefined;
    }
  }
}
