/**
 * The batches of each partition, handled in the order they were fetched while fetching
 * goes on. Whatever queued up behind a partition's batch in progress is handled next as
 * one unit (one send phase, one commit), so a partition keeps up however small the
 * fetches are. Named transitions: `enter` (a batch was handed over), `prepare` (the
 * group assigned the partition: its takeover runs as the lane's next turn, before any
 * batch, whether or not one has arrived), `rewound` (the partition is fetched again from
 * an earlier offset) and, inside, a lane's turn.
 *
 * A batch handed over before a rewind, or in an earlier assignment of the group, is
 * stale: its records are fetched again (from the rewind's offset, or from the committed
 * group offset after a rejoin), so it is dropped, never handled twice and never skipped.
 */

import { ownStates, type PartitionStates, whenAllIdle } from './partition-states.ts';

export interface PartitionLanesOptions<T> {
  /** Handles the batches a partition queued, oldest first; settles when they are done. */
  readonly handle: (partition: number, items: readonly T[]) => Promise<void>;
  /** Readies a partition of the current assignment before its batches; never rejects. */
  readonly prepare?: (partition: number) => Promise<void>;
  /** Lets an idle partition go at a rebalance (see `release`); never rejects. */
  readonly release?: (partition: number) => Promise<void>;
  /** Batches dropped as stale (a rewind or a rejoin), or because the lanes are closing. */
  readonly drop: (items: readonly T[]) => void;
  /** The group assignment now (a count that grows with each rejoin). */
  readonly assignment: () => number;
  /** Where each partition's lane is kept (default: a map of its own). */
  readonly lanes?: PartitionStates<Lane<T>>;
}

interface Entry<T> {
  readonly item: T;
  readonly assignment: number;
}

/** One partition's lane: what waits, how often it was rewound, its turn in progress. */
export interface Lane<T> {
  queue: Entry<T>[];
  /** Rewinds of the partition so far. */
  rewinds: number;
  /** The turn in progress, if any. */
  running: Promise<void> | undefined;
  /** The assignment whose preparation is still to run before the next batch, if any. */
  prepareFor: number | undefined;
  /** The assignment in which an idle partition is to be let go, if any. */
  releaseFor: number | undefined;
}

export function newLane<T>(): Lane<T> {
  return {
    queue: [],
    rewinds: 0,
    running: undefined,
    prepareFor: undefined,
    releaseFor: undefined,
  };
}

export class PartitionLanes<T> {
  readonly #options: PartitionLanesOptions<T>;
  readonly #lanes: PartitionStates<Lane<T>>;
  #closed = false;

  constructor(options: PartitionLanesOptions<T>) {
    this.#options = options;
    this.#lanes = options.lanes ?? ownStates(() => newLane<T>());
  }

  #lane(partition: number): Lane<T> {
    return this.#lanes.get(partition);
  }

  /** A batch of `partition` joins the end of its lane; its turn comes after those before it. */
  enter(partition: number, item: T): void {
    if (this.#closed) {
      this.#options.drop([item]);
      return;
    }
    const lane = this.#lane(partition);
    lane.queue.push({ item, assignment: this.#options.assignment() });
    if (lane.running === undefined) lane.running = this.#turns(partition, lane);
  }

  /**
   * The group assigned the partition in the current assignment: it is prepared as the
   * lane's next turn, after the turn in progress (work of the earlier assignment) and
   * before any batch queued behind it. A preparation of an earlier assignment not begun
   * yet is replaced; no preparation without a `prepare` option.
   */
  prepare(partition: number): void {
    if (this.#closed || this.#options.prepare === undefined) return;
    const lane = this.#lane(partition);
    lane.prepareFor = this.#options.assignment();
    if (lane.running === undefined) lane.running = this.#turns(partition, lane);
  }

  /**
   * A rebalance began: the partition is let go (its intent cleared) once nothing waits in
   * its lane, as a turn of its own, unless the group answers first. An idle lane lets go
   * at once; a lane with a turn in progress or batches queued lets go after them (the
   * release itself then checks that nothing they sent is still unsettled). Asked only
   * while the lane was busy and never again, a release used to be lost, and a partition
   * whose last batch was left to the rejoin kept its intent.
   */
  release(partition: number): void {
    if (this.#closed || this.#options.release === undefined) return;
    const lane = this.#lanes.find(partition);
    if (!lane) return;
    lane.releaseFor = this.#options.assignment();
    if (lane.running === undefined) lane.running = this.#turns(partition, lane);
  }

  /**
   * The partition is fetched again from the first record of the batch that just failed:
   * everything queued behind it comes again, so it is dropped now.
   */
  rewound(partition: number): void {
    const lane = this.#lane(partition);
    lane.rewinds += 1;
    this.#dropQueued(lane);
  }

  /**
   * Rewinds of the partition so far: a batch taken from the lane before a rewind that
   * has not finished by then is stale too (its records come again).
   */
  rewinds(partition: number): number {
    return this.#lanes.find(partition)?.rewinds ?? 0;
  }

  /** No more turns begin: what is queued is dropped, turns in progress finish. */
  close(): void {
    this.#closed = true;
    for (const lane of this.#lanes.all()) this.#dropQueued(lane);
  }

  #dropQueued(lane: Lane<T>): void {
    if (lane.queue.length === 0) return;
    const stale = lane.queue.map((entry) => entry.item);
    lane.queue = [];
    this.#options.drop(stale);
  }

  /** Batches handed over and not yet done or dropped, over all partitions. */
  get waiting(): number {
    let count = 0;
    for (const lane of this.#lanes.all()) {
      count += lane.queue.length + (lane.running === undefined ? 0 : 1);
    }
    return count;
  }

  /** What the partition's lane holds: batches queued, and whether a turn is in progress. */
  describe(partition: number): { queued: number; turn: boolean } {
    const lane = this.#lanes.find(partition);
    return { queued: lane?.queue.length ?? 0, turn: lane?.running !== undefined };
  }

  /** Settles once no lane has a turn in progress. */
  idle(): Promise<void> {
    return whenAllIdle(this.#lanes);
  }

  async #turns(partition: number, lane: Lane<T>): Promise<void> {
    // Handed over in the same turn of the event loop (one fetch's batches) go together.
    await new Promise((resolve) => setImmediate(resolve));
    try {
      while (this.#pending(lane)) {
        const releasing = lane.releaseFor;
        if (releasing !== this.#options.assignment()) {
          // Asked in an earlier assignment: the group has answered since.
          lane.releaseFor = undefined;
        } else if (lane.queue.length === 0 && lane.prepareFor === undefined) {
          // Once what the lane held is done; batches queued first are handled first.
          lane.releaseFor = undefined;
          await this.#options.release?.(partition);
        }
        const preparing = lane.prepareFor;
        lane.prepareFor = undefined;
        // A preparation of an earlier assignment is dropped, like its batches.
        if (preparing === this.#options.assignment()) {
          await this.#options.prepare?.(partition);
          // The group answered again meanwhile: its preparation comes before its batches.
          if (lane.prepareFor !== undefined) continue;
        }
        if (this.#closed) break;
        const assignment = this.#options.assignment();
        const entries = lane.queue;
        lane.queue = [];
        const current = entries.filter((entry) => entry.assignment === assignment);
        const stale = entries.filter((entry) => entry.assignment !== assignment);
        if (stale.length > 0) this.#options.drop(stale.map((entry) => entry.item));
        if (current.length > 0) {
          await this.#options.handle(
            partition,
            current.map((entry) => entry.item),
          );
        }
      }
    } finally {
      lane.running = undefined;
      if (this.#pending(lane)) lane.running = this.#turns(partition, lane);
    }
  }

  /** Whether the lane has a batch or a preparation waiting for a turn. */
  #pending(lane: Lane<T>): boolean {
    return (
      !this.#closed &&
      (lane.queue.length > 0 || lane.prepareFor !== undefined || lane.releaseFor !== undefined)
    );
  }
}
