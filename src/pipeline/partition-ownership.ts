/**
 * What this replica knows about the partitions it owns or owned: the group lease it
 * holds them by (group-lease.ts: generation, assignment, abort signal) and one
 * PartitionFacts per partition (partition-facts.ts: takeover, intent, doubt, carried
 * sends, fencing, quiet period, its own last commit). Every change goes through the
 * named transitions here or on those two; nothing else holds a partition's facts.
 */
import { GroupLease } from './group-lease.ts';
import type {
  CarriedOutcome,
  CommittedOffset,
  PartitionFacts,
  Takeover,
} from './partition-facts.ts';
import { PartitionWorkers } from './partition-worker.ts';

export type { CarriedOutcome, CommittedOffset, Takeover } from './partition-facts.ts';

export class PartitionOwnership {
  readonly #lease = new GroupLease();
  readonly #workers: PartitionWorkers;

  /** `workers`: where each partition's facts live (the pipeline's, shared with its other parts). */
  constructor(workers: PartitionWorkers = new PartitionWorkers()) {
    this.#workers = workers;
  }

  get generation(): number {
    return this.#lease.generation;
  }

  get assignment(): number {
    return this.#lease.assignment;
  }

  get signal(): AbortSignal {
    return this.#lease.signal;
  }

  /** See GroupLease.answeredSignal. */
  get answeredSignal(): AbortSignal {
    return this.#lease.answeredSignal;
  }

  /** See GroupLease.rebalancing. */
  get rebalancing(): boolean {
    return this.#lease.rebalancing;
  }

  /** See GroupLease.sendsContinue. */
  sendsContinue(generation: number, assignment: number): boolean {
    return this.#lease.sendsContinue(generation, assignment);
  }

  /** The facts of one partition (created empty on first use). */
  facts(partition: number): PartitionFacts {
    return this.#workers.get(partition).facts;
  }

  /** The facts of a partition this replica knows, never new ones. */
  #known(partition: number): PartitionFacts | undefined {
    return this.#workers.find(partition)?.facts;
  }

  // --- transitions -------------------------------------------------------------

  rebalanceStarted(how: { announced?: boolean } = {}): void {
    this.#lease.rebalanceStarted(how);
  }

  /**
   * The group assigned `partitions` to member `memberId`. Everything learned at the last
   * takeovers is read again; a member taken back under a new id (it was expelled) must
   * initialise every producer again.
   */
  assigned(partitions: readonly number[], memberId: string | undefined): { rejoined: boolean } {
    const { rejoined } = this.#lease.assigned(partitions, memberId);
    for (const worker of this.#workers) {
      worker.facts.reassigned(!rejoined && this.#lease.owns(worker.partition));
    }
    return { rejoined };
  }

  /**
   * A takeover's reading of the group offset and intent.
   * @returns false, learning nothing, when the group answered since the takeover began:
   *   counted, it would let the new assignment's first batch skip its own takeover and
   *   send while the old assignment's batches still hold this process's earlier answers.
   */
  takenOver(partition: number, takeover: Takeover): boolean {
    if (takeover.assignment !== this.#lease.assignment) return false;
    this.facts(partition).takenOver(takeover);
    return true;
  }

  intentWritten(partition: number, untilOffset: string, offset?: CommittedOffset): void {
    this.facts(partition).intentWritten(untilOffset, offset);
  }

  intentCleared(partition: number): void {
    this.facts(partition).intentCleared();
  }

  batchCommitted(
    partition: number,
    committed: { topic: string; lastOffset: string; intentUntil: string; assignment: number },
  ): void {
    this.facts(partition).batchCommitted(committed);
  }

  batchCarried(partition: number, outcomes: Iterable<[string, CarriedOutcome]>): void {
    this.facts(partition).batchCarried(outcomes);
  }

  abandoned(partition: number, quietMs: number, now = Date.now()): void {
    this.facts(partition).abandoned(quietMs, now);
  }

  fenced(partition: number, holdMs: number, assignment: number, now = Date.now()): void {
    this.facts(partition).fenced(holdMs, assignment === this.#lease.assignment, now);
  }

  commitUncertain(partition: number): void {
    this.facts(partition).commitUncertain();
  }

  // --- questions ---------------------------------------------------------------

  owns(partition: number): boolean {
    return this.#lease.owns(partition);
  }

  /**
   * Whether work begun in `assignment` may still commit or send for the partition. A
   * batch of an earlier assignment is read again from the group offset instead;
   * committing it could move that offset under the partition's new owner, or past
   * commands read again here.
   */
  holds(partition: number, assignment: number): boolean {
    return this.#lease.holds(partition, assignment);
  }

  fencedState(partition: number, now = Date.now()): 'hold' | 'free' {
    return this.#known(partition)?.fencedState(now) ?? 'free';
  }

  quietFor(partition: number, now = Date.now()): number {
    return this.#known(partition)?.quietFor(now) ?? 0;
  }

  quietOver(partition: number): void {
    this.#known(partition)?.quietOver();
  }

  readBehind(partition: number, committed: bigint | undefined): boolean {
    return this.#known(partition)?.readBehind(committed) ?? false;
  }

  needsTakeover(partition: number): boolean {
    return this.#known(partition)?.needsTakeover() ?? true;
  }

  floor(partition: number): bigint | undefined {
    return this.#known(partition)?.floor;
  }

  inDoubt(partition: number, offset: string): boolean {
    return this.#known(partition)?.inDoubt(offset) ?? false;
  }

  doubtUntil(partition: number): string | undefined {
    return this.#known(partition)?.doubtUntil;
  }

  doubtBeyond(partition: number, lastOffset: string): string | undefined {
    return this.#known(partition)?.doubtBeyond(lastOffset);
  }

  coveredUntil(partition: number): string | undefined {
    return this.#known(partition)?.coveredUntil;
  }

  covers(partition: number, lastOffset: string): boolean {
    return this.#known(partition)?.covers(lastOffset) ?? false;
  }

  hasCarried(partition: number, offset: string): boolean {
    return this.#known(partition)?.hasCarried(offset) ?? false;
  }

  takeCarried(partition: number, offset: string): CarriedOutcome | undefined {
    return this.#known(partition)?.takeCarried(offset);
  }

  /**
   * The group offset of `partition` this replica committed in the current assignment,
   * when nothing of the partition is unsettled (no doubt, no carried sends, no sends given
   * up on still possibly on their way): its intent can be cleared once no batch of the
   * partition is in flight either.
   */
  releasableOne(
    partition: number,
    now = Date.now(),
  ): { topic: string; offset: string } | undefined {
    const facts = this.#known(partition);
    if (!facts || facts.quietFor(now) > 0) return undefined;
    const next = facts.releasable(this.#lease.assignment);
    return next ? { topic: next.topic, offset: next.offset } : undefined;
  }

  /**
   * The group offsets this replica committed in the current assignment with nothing of
   * the partition unsettled: their intents can be cleared on a drained stop.
   */
  releasable(): { partition: number; topic: string; offset: string }[] {
    const out: { partition: number; topic: string; offset: string }[] = [];
    for (const { partition, facts } of this.#workers) {
      const next = facts.releasable(this.#lease.assignment);
      if (next) out.push({ partition, topic: next.topic, offset: next.offset });
    }
    return out;
  }
}
