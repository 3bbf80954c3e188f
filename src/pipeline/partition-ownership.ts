/**
 * What this replica knows about the partitions it owns or owned: the group lease it
 * holds them by (group-lease.ts: generation, assignment, abort signal) and one
 * PartitionFacts per partition (partition-facts.ts: takeover, intent, doubt, carried
 * sends, fencing, quiet period, its own last commit). Every change goes through the
 * named transitions here or on those two; nothing else holds a partition's facts.
 */
import { GroupLease } from './group-lease.ts';
import { type CarriedOutcome, PartitionFacts, type Takeover } from './partition-facts.ts';

export type { CarriedOutcome, CommittedOffset, Takeover } from './partition-facts.ts';

export class PartitionOwnership {
  readonly #lease = new GroupLease();
  readonly #partitions = new Map<number, PartitionFacts>();

  get generation(): number {
    return this.#lease.generation;
  }

  get assignment(): number {
    return this.#lease.assignment;
  }

  get signal(): AbortSignal {
    return this.#lease.signal;
  }

  /** The facts of one partition (created empty on first use). */
  facts(partition: number): PartitionFacts {
    let facts = this.#partitions.get(partition);
    if (!facts) {
      facts = new PartitionFacts();
      this.#partitions.set(partition, facts);
    }
    return facts;
  }

  // --- transitions -------------------------------------------------------------

  rebalanceStarted(): void {
    this.#lease.rebalanceStarted();
  }

  /**
   * The group assigned `partitions` to member `memberId`. Everything learned at the last
   * takeovers is read again; a member taken back under a new id (it was expelled) must
   * initialise every producer again.
   */
  assigned(partitions: readonly number[], memberId: string | undefined): { rejoined: boolean } {
    const { rejoined } = this.#lease.assigned(partitions, memberId);
    for (const [partition, facts] of this.#partitions) {
      facts.reassigned(!rejoined && this.#lease.owns(partition));
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

  intentWritten(partition: number, untilOffset: string): void {
    this.facts(partition).intentWritten(untilOffset);
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
    return this.#partitions.get(partition)?.fencedState(now) ?? 'free';
  }

  quietFor(partition: number, now = Date.now()): number {
    return this.#partitions.get(partition)?.quietFor(now) ?? 0;
  }

  quietOver(partition: number): void {
    this.#partitions.get(partition)?.quietOver();
  }

  readBehind(partition: number, committed: bigint | undefined): boolean {
    return this.#partitions.get(partition)?.readBehind(committed) ?? false;
  }

  needsTakeover(partition: number): boolean {
    return this.#partitions.get(partition)?.needsTakeover() ?? true;
  }

  floor(partition: number): bigint | undefined {
    return this.#partitions.get(partition)?.floor;
  }

  inDoubt(partition: number, offset: string): boolean {
    return this.#partitions.get(partition)?.inDoubt(offset) ?? false;
  }

  doubtUntil(partition: number): string | undefined {
    return this.#partitions.get(partition)?.doubtUntil;
  }

  doubtBeyond(partition: number, lastOffset: string): string | undefined {
    return this.#partitions.get(partition)?.doubtBeyond(lastOffset);
  }

  coveredUntil(partition: number): string | undefined {
    return this.#partitions.get(partition)?.coveredUntil;
  }

  covers(partition: number, lastOffset: string): boolean {
    return this.#partitions.get(partition)?.covers(lastOffset) ?? false;
  }

  hasCarried(partition: number, offset: string): boolean {
    return this.#partitions.get(partition)?.hasCarried(offset) ?? false;
  }

  takeCarried(partition: number, offset: string): CarriedOutcome | undefined {
    return this.#partitions.get(partition)?.takeCarried(offset);
  }

  /**
   * The group offsets this replica committed in the current assignment with nothing of
   * the partition unsettled: their intents can be cleared on a drained stop.
   */
  releasable(): { partition: number; topic: string; offset: string }[] {
    const out: { partition: number; topic: string; offset: string }[] = [];
    for (const [partition, facts] of this.#partitions) {
      const next = facts.releasable(this.#lease.assignment);
      if (next) out.push({ partition, topic: next.topic, offset: next.offset });
    }
    return out;
  }

  describe(partition: number): Record<string, unknown> {
    const facts = this.#partitions.get(partition);
    const owned = this.#lease.owns(partition);
    if (!facts) return { owned, known: false };
    return {
      owned,
      ...facts.describe(),
      generation: this.#lease.generation,
      assignment: this.#lease.assignment,
    };
  }
}
