/**
 * Everything this replica holds for one partition, in one object: what it knows of the
 * partition (PartitionFacts: takeover, intent, doubt, carried sends, fencing), where its
 * batches must continue (BatchSequence), its lane of fetched batches, its batches waiting
 * to commit in order, its transactional producer, its lag, its last fetch, the step its
 * turn in progress is at, and the command ids it handled (duplicate suppression). The modules that act on a partition
 * (turns, processor, handover, transactions) keep no state of their own per partition:
 * they read and change it here, through the named transitions of its parts.
 *
 * Its state, for logs and the stall warning, follows from the group lease and its facts:
 * `released` (not assigned here), `fenced` (another replica initialised its producer
 * lately), `taking-over` (its first batch of this assignment must fence and read the group
 * offset first) or `ready`.
 */
import type { PartitionProducer } from '../kafka/kafka-port.ts';
import { BatchSequence } from './batch-sequence.ts';
import { type DedupeLimits, DedupeStore } from './dedupe-store.ts';
import { type CommitQueue, newCommitQueue } from './ordered-commits.ts';
import { PartitionFacts } from './partition-facts.ts';
import { type Lane, newLane } from './partition-lanes.ts';
import type { PartitionStates } from './partition-states.ts';
import type { LaneBatch } from './partition-turns.ts';
import type { SentBatch } from './sent-batch.ts';

export type WorkerState = 'released' | 'fenced' | 'taking-over' | 'ready';

export class PartitionWorker {
  readonly partition: number;
  readonly facts = new PartitionFacts();
  readonly sequence = new BatchSequence();
  /** Fetched batches waiting for their turn, and the turn in progress. */
  readonly lane: Lane<LaneBatch> = newLane();
  /** Batches whose commands are out, to commit in fetch order. */
  readonly commits: CommitQueue<SentBatch> = newCommitQueue();
  /** The partition's transactional producer, once created (initialising it fences others). */
  producer: Promise<PartitionProducer> | undefined;
  /** Records behind the last batch fetched; undefined while not assigned here. */
  lag: number | undefined;
  /** When the last batch was handed over, and its last offset. */
  lastFetched: { readonly atMs: number; readonly lastOffset: string } | undefined;
  /** Where the turn in progress is (for the stall warning). */
  step: string | undefined;
  /** Command ids handled and on their way (duplicate suppression, dedupe.ts). */
  readonly dedupe: DedupeStore;

  constructor(partition: number, dedupeLimits: DedupeLimits = NO_DEDUPE) {
    this.partition = partition;
    this.dedupe = new DedupeStore(dedupeLimits);
  }

  /** The worker's state, given whether the group assigned the partition here last. */
  state(owned: boolean, now = Date.now()): WorkerState {
    if (!owned) return 'released';
    if (this.facts.fencedState(now) === 'hold') return 'fenced';
    return this.facts.needsTakeover() ? 'taking-over' : 'ready';
  }

  /** What is known of the partition, for the stall warning's `ownership`. */
  describe(owned: boolean): Record<string, unknown> {
    return { owned, state: this.state(owned), ...this.facts.describe() };
  }
}

/** Limits of a store that is never used (duplicate suppression off). */
const NO_DEDUPE: DedupeLimits = { windowMs: 0, maxIds: 0 };

/** The workers of the partitions this replica owns or owned, created on first use. */
export class PartitionWorkers {
  readonly #workers = new Map<number, PartitionWorker>();
  readonly #dedupeLimits: DedupeLimits;

  constructor(dedupeLimits: DedupeLimits = NO_DEDUPE) {
    this.#dedupeLimits = dedupeLimits;
  }

  get(partition: number): PartitionWorker {
    let worker = this.#workers.get(partition);
    if (!worker) {
      worker = new PartitionWorker(partition, this.#dedupeLimits);
      this.#workers.set(partition, worker);
    }
    return worker;
  }

  /** The worker if one exists, never a new one. */
  find(partition: number): PartitionWorker | undefined {
    return this.#workers.get(partition);
  }

  [Symbol.iterator](): IterableIterator<PartitionWorker> {
    return this.#workers.values();
  }

  /** One part of every worker, as a per-partition mechanism keeps its states. */
  view<S>(part: (worker: PartitionWorker) => S): PartitionStates<S> {
    return {
      get: (partition) => part(this.get(partition)),
      find: (partition) => {
        const worker = this.find(partition);
        return worker === undefined ? undefined : part(worker);
      },
      all: () => [...this.#workers.values()].map(part),
    };
  }
}
