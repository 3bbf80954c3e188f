/**
 * What this replica knows about each partition it owns or owned: the rules of a safe
 * handover in one place, as named transitions (assigned, takenOver, intentWritten,
 * batchCommitted, batchCarried, abandoned, fenced, commitUncertain, rebalanceStarted)
 * and the questions the pipeline asks before it sends.
 *
 * - A generation counts rebalances: batches of an older one stop sending and waiting.
 * - An assignment counts the group's answers: what was learned about a partition at
 *   its takeover holds until the next one.
 * - Doubt (another writer's sends not yet looked up) and carried outcomes (this
 *   process's own sends without a committed result) outlive the loss of a partition:
 *   should it come back with this process's intent still the last one written, they
 *   are exactly what is not settled.
 */
import { maxOffset, type SendIntent } from './send-intent.ts';
import type { SendOutcome } from './send-outcome.ts';

/** A send handed out by this process, and how it ended (or will). */
export type CarriedOutcome = Promise<SendOutcome | undefined>;

/** What a takeover read from the group offset of a partition. */
export interface Takeover {
  /** The committed offset; records below it were committed by an earlier owner. */
  readonly committed: bigint | undefined;
  /** The send intent stored with it, if it still reaches at or past `committed`. */
  readonly intent: SendIntent | undefined;
  /** The intent was written by this process. */
  readonly own: boolean;
  /** The assignment the takeover began in (see `takenOver`). */
  readonly assignment: number;
}

/** A group offset this replica committed, with the assignment it was committed in. */
export interface CommittedOffset {
  readonly topic: string;
  readonly offset: string;
  readonly assignment: number;
}

interface PartitionState {
  /** Takeover done in this assignment. */
  checked: boolean;
  floor: bigint | undefined;
  /** Last offset the intent stored with the group offset covers, written by this process. */
  covered: bigint | undefined;
  doubt: SendIntent | undefined;
  readonly carried: Map<string, CarriedOutcome>;
  fencedUntil: number | undefined;
  quietUntil: number | undefined;
  committedNext: CommittedOffset | undefined;
}

export class PartitionOwnership {
  readonly #partitions = new Map<number, PartitionState>();
  #owned = new Set<number>();
  #generation = 0;
  #assignment = 0;
  #memberId: string | undefined;
  #abort = new AbortController();

  /** Counts rebalances (and suspected losses of membership). */
  get generation(): number {
    return this.#generation;
  }

  /** Counts assignments received from the group. */
  get assignment(): number {
    return this.#assignment;
  }

  /** Aborted as soon as the generation changes. */
  get signal(): AbortSignal {
    return this.#abort.signal;
  }

  #state(partition: number): PartitionState {
    let state = this.#partitions.get(partition);
    if (!state) {
      state = {
        checked: false,
        floor: undefined,
        covered: undefined,
        doubt: undefined,
        carried: new Map(),
        fencedUntil: undefined,
        quietUntil: undefined,
        committedNext: undefined,
      };
      this.#partitions.set(partition, state);
    }
    return state;
  }

  // --- transitions -------------------------------------------------------------

  /**
   * A rebalance started, a heartbeat failed, or this member found itself out of the
   * group: its partitions may be another replica's already. Batches in progress stop.
   */
  rebalanceStarted(): void {
    this.#generation += 1;
    this.#abort.abort();
    this.#abort = new AbortController();
  }

  /**
   * The group assigned `partitions` to member `memberId`. Everything learned at the
   * last takeovers is read again; a member taken back under a new id (it was expelled)
   * must initialise every producer again.
   * @returns whether the member id changed since the last assignment.
   */
  assigned(partitions: readonly number[], memberId: string | undefined): { rejoined: boolean } {
    const rejoined = this.#memberId !== undefined && memberId !== this.#memberId;
    this.#memberId = memberId;
    this.#assignment += 1;
    this.#owned = new Set(partitions);
    for (const [partition, state] of this.#partitions) {
      state.checked = false;
      state.floor = undefined;
      state.covered = undefined;
      state.fencedUntil = undefined;
      // Expelled and back: the group may have been empty meanwhile, its offsets reset.
      if (rejoined || !this.#owned.has(partition)) state.committedNext = undefined;
    }
    return { rejoined };
  }

  /**
   * The first batch of an assignment read the group offset, after initialising the
   * partition's producer. What is committed is settled. This process's own intent puts
   * nothing in doubt (its sends are carried); another writer's intent puts its range in
   * doubt, and is not taken as covering this process's sends, so the first batch writes
   * an intent of its own.
   * @returns false, learning nothing, when the group answered since the takeover began.
   */
  takenOver(partition: number, takeover: Takeover): boolean {
    // Begun before the group's last answer: what it read says nothing about this
    // assignment. Counted, it would let the new assignment's first batch skip its own
    // takeover and send while the old assignment's batches still hold this process's
    // earlier answers (it would send those commands again), and commit behind them.
    if (takeover.assignment !== this.#assignment) return false;
    const state = this.#state(partition);
    state.checked = true;
    state.floor = takeover.committed;
    if (takeover.committed !== undefined) this.#settledBelow(state, takeover.committed);
    const { intent } = takeover;
    if (!intent) return true;
    if (takeover.own) {
      state.covered = BigInt(intent.untilOffset);
      return true;
    }
    state.doubt = {
      ...intent,
      untilOffset: maxOffset(intent.untilOffset, state.doubt?.untilOffset),
    };
    // Another replica wrote after this one: it may have sent what this one carried (it
    // looked it up, found it unsent, and sent it). What this process remembers of those
    // offsets is not the last word; they are looked up like the rest of the range.
    for (const key of [...state.carried.keys()]) {
      if (BigInt(key) <= BigInt(intent.untilOffset)) state.carried.delete(key);
    }
    return true;
  }

  /** An intent of this process, reaching `untilOffset`, is stored with the group offset. */
  intentWritten(partition: number, untilOffset: string): void {
    this.#state(partition).covered = BigInt(untilOffset);
  }

  /**
   * A batch's results committed up to `lastOffset`, with the group offset `next` and
   * an intent reaching `intentUntil`. Doubt up to `lastOffset` is settled.
   */
  batchCommitted(
    partition: number,
    committed: { topic: string; lastOffset: string; intentUntil: string; assignment: number },
  ): void {
    const state = this.#state(partition);
    const next = BigInt(committed.lastOffset) + 1n;
    state.covered = BigInt(committed.intentUntil);
    state.committedNext = {
      topic: committed.topic,
      offset: next.toString(),
      assignment: committed.assignment,
    };
    this.#settledBelow(state, next);
  }

  /**
   * A batch returned without committing (a rebalance, a failed commit, sends given
   * up): what it handed out is kept for the batch read again, by offset.
   */
  batchCarried(partition: number, outcomes: Iterable<[string, CarriedOutcome]>): void {
    const { carried } = this.#state(partition);
    for (const [offset, outcome] of outcomes) carried.set(offset, outcome);
  }

  /** Sends of the partition may still be on their way: no lookups for `quietMs`. */
  abandoned(partition: number, quietMs: number, now = Date.now()): void {
    this.#state(partition).quietUntil = now + quietMs;
  }

  /**
   * Another replica initialised the partition's producer in this assignment: it is left
   * alone for `holdMs` unless the group assigns it again. A fencing seen by a batch of
   * an earlier assignment says nothing about this one.
   */
  fenced(partition: number, holdMs: number, assignment: number, now = Date.now()): void {
    const state = this.#state(partition);
    // What this replica committed last is no longer the partition's offset to restore.
    state.committedNext = undefined;
    if (assignment !== this.#assignment) return;
    state.fencedUntil = now + holdMs;
  }

  /** A commit's outcome is unknown: the group offset is read again before going on. */
  commitUncertain(partition: number): void {
    this.#state(partition).checked = false;
  }

  // --- questions ---------------------------------------------------------------

  /** Whether this member was assigned the partition last. */
  owns(partition: number): boolean {
    return this.#owned.has(partition);
  }

  /**
   * Whether work begun in `assignment` may still commit or send for the partition: the
   * group has not answered since, and it left the partition here. A batch of an earlier
   * assignment is read again from the group offset instead; committing it could move
   * that offset under the partition's new owner, or past commands read again here.
   */
  holds(partition: number, assignment: number): boolean {
    return assignment === this.#assignment && this.#owned.has(partition);
  }

  /**
   * `hold` while another replica's fencing is recent; once the hold passed, the
   * partition is taken over again (`free`).
   */
  fencedState(partition: number, now = Date.now()): 'hold' | 'free' {
    const state = this.#partitions.get(partition);
    if (state?.fencedUntil === undefined) return 'free';
    if (now < state.fencedUntil) return 'hold';
    state.fencedUntil = undefined;
    state.checked = false;
    return 'free';
  }

  /** How long lookups of the partition must still wait, ms (0: none). */
  quietFor(partition: number, now = Date.now()): number {
    const until = this.#partitions.get(partition)?.quietUntil;
    return until === undefined ? 0 : Math.max(0, until - now);
  }

  /** The quiet period is over. */
  quietOver(partition: number): void {
    const state = this.#partitions.get(partition);
    if (state) state.quietUntil = undefined;
  }

  /**
   * Whether a group offset read at a takeover is behind what this replica itself
   * committed while it kept the partition (and was not fenced): the read came before that
   * commit's markers, and trusting it would read, send and commit that batch again.
   */
  readBehind(partition: number, committed: bigint | undefined): boolean {
    const own = this.#partitions.get(partition)?.committedNext;
    if (own === undefined) return false;
    return committed === undefined || committed < BigInt(own.offset);
  }

  needsTakeover(partition: number): boolean {
    return !(this.#partitions.get(partition)?.checked ?? false);
  }

  /** Records below this offset were committed before this assignment's takeover. */
  floor(partition: number): bigint | undefined {
    return this.#partitions.get(partition)?.floor;
  }

  /** Whether another writer may have sent this offset, not yet looked up. */
  inDoubt(partition: number, offset: string): boolean {
    const doubt = this.#partitions.get(partition)?.doubt;
    return doubt !== undefined && BigInt(offset) <= BigInt(doubt.untilOffset);
  }

  /** The last offset in doubt, if any. */
  doubtUntil(partition: number): string | undefined {
    return this.#partitions.get(partition)?.doubt?.untilOffset;
  }

  /** Doubt reaching past `lastOffset`: it stays after a batch up to there commits. */
  doubtBeyond(partition: number, lastOffset: string): string | undefined {
    const until = this.doubtUntil(partition);
    return until !== undefined && BigInt(until) > BigInt(lastOffset) ? until : undefined;
  }

  /** The last offset the stored intent of this process covers, if any. */
  coveredUntil(partition: number): string | undefined {
    return this.#partitions.get(partition)?.covered?.toString();
  }

  /** Whether the stored intent of this process already covers `lastOffset`. */
  covers(partition: number, lastOffset: string): boolean {
    const covered = this.#partitions.get(partition)?.covered;
    return covered !== undefined && BigInt(lastOffset) <= covered;
  }

  /** Whether an earlier read of the partition handed this offset out. */
  hasCarried(partition: number, offset: string): boolean {
    return this.#partitions.get(partition)?.carried.has(offset) ?? false;
  }

  /** The outcome handed out for this offset by an earlier read, taken (once). */
  takeCarried(partition: number, offset: string): CarriedOutcome | undefined {
    const carried = this.#partitions.get(partition)?.carried;
    const outcome = carried?.get(offset);
    carried?.delete(offset);
    return outcome;
  }

  /**
   * The group offsets this replica committed in the current assignment with nothing of
   * the partition unsettled: their intents can be cleared on a drained stop.
   */
  releasable(): { partition: number; topic: string; offset: string }[] {
    const out: { partition: number; topic: string; offset: string }[] = [];
    for (const [partition, state] of this.#partitions) {
      const next = state.committedNext;
      if (!next || next.assignment !== this.#assignment) continue;
      if (state.doubt !== undefined || state.carried.size > 0) continue;
      out.push({ partition, topic: next.topic, offset: next.offset });
    }
    return out;
  }

  /** What is known about a partition, for a log line. */
  describe(partition: number): Record<string, unknown> {
    const state = this.#partitions.get(partition);
    if (!state) return { owned: this.#owned.has(partition), known: false };
    return {
      owned: this.#owned.has(partition),
      takenOver: state.checked,
      coveredUntil: state.covered?.toString(),
      doubtUntil: state.doubt?.untilOffset,
      carried: state.carried.size,
      fencedUntil: state.fencedUntil,
      quietUntil: state.quietUntil,
      committedNext: state.committedNext?.offset,
      generation: this.#generation,
      assignment: this.#assignment,
    };
  }

  #settledBelow(state: PartitionState, offset: bigint): void {
    if (state.doubt && BigInt(state.doubt.untilOffset) < offset) state.doubt = undefined;
    for (const key of [...state.carried.keys()]) {
      if (BigInt(key) < offset) state.carried.delete(key);
    }
  }
}
