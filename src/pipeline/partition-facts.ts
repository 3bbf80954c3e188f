/**
 * What this replica knows about one partition it owns or owned, as named transitions
 * (reassigned, takenOver, intentWritten, intentCleared, batchCommitted, batchCarried,
 * abandoned, fenced, commitUncertain) and the questions asked before a batch sends or commits.
 *
 * Doubt (another writer's sends not yet looked up) and carried outcomes (this process's
 * own sends without a committed result) outlive the loss of the partition: should it
 * come back with this process's intent still the last one written, they are exactly
 * what is not settled.
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
  /** The assignment the takeover began in (see PartitionOwnership.takenOver). */
  readonly assignment: number;
}

/** A group offset this replica committed, with the assignment it was committed in. */
export interface CommittedOffset {
  readonly topic: string;
  readonly offset: string;
  readonly assignment: number;
}

export class PartitionFacts {
  /** Taken over in the current assignment. */
  #checked = false;
  #floor: bigint | undefined;
  /** Last offset the intent stored with the group offset covers, written by this process. */
  #covered: bigint | undefined;
  #doubt: SendIntent | undefined;
  readonly #carried = new Map<string, CarriedOutcome>();
  /**
   * Carried offsets whose outcome turned out to be given up before its request left
   * (abandoned, not sent): nothing of them is on its way, so they do not keep the
   * partition's intent (see `releasable`); the next read sends them.
   */
  readonly #carriedUnsent = new Set<string>();
  #fencedUntil: number | undefined;
  #quietUntil: number | undefined;
  #committedNext: CommittedOffset | undefined;

  // --- transitions -------------------------------------------------------------

  /**
   * The group answered: what the last takeover learned is read again. Unless the member
   * kept the partition under the same id, the offset it committed last is no longer the
   * one to restore (the group may have been empty meanwhile, its offsets reset).
   */
  reassigned(keptUnderSameMember: boolean): void {
    this.#checked = false;
    this.#floor = undefined;
    this.#covered = undefined;
    this.#fencedUntil = undefined;
    if (!keptUnderSameMember) this.#committedNext = undefined;
  }

  /**
   * The first batch of an assignment read the group offset, after initialising the
   * partition's producer. What is committed is settled. This process's own intent puts
   * nothing in doubt (its sends are carried); another writer's intent puts its range in
   * doubt, and is not taken as covering this process's sends.
   */
  takenOver(takeover: Takeover): void {
    this.#checked = true;
    this.#floor = takeover.committed;
    // A group offset ahead of this replica's last commit (a commit whose answer was lost
    // landed after all, or another writer's): that commit is no longer the partition's
    // offset, and clearing an intent at it would move the offset back.
    if (
      this.#committedNext !== undefined &&
      takeover.committed?.toString() !== this.#committedNext.offset
    ) {
      this.#committedNext = undefined;
    }
    if (takeover.committed !== undefined) this.#settledBelow(takeover.committed);
    const { intent } = takeover;
    if (!intent) return;
    if (takeover.own) {
      this.#covered = BigInt(intent.untilOffset);
      return;
    }
    this.#doubt = {
      ...intent,
      untilOffset: maxOffset(intent.untilOffset, this.#doubt?.untilOffset),
    };
    // Another replica wrote after this one: it may have sent what this one carried (it
    // looked it up, found it unsent, and sent it). Those offsets are looked up like the
    // rest of the range.
    for (const key of [...this.#carried.keys()]) {
      if (BigInt(key) <= BigInt(intent.untilOffset)) this.#dropCarried(key);
    }
  }

  /**
   * An intent of this process, reaching `untilOffset`, is stored with the group offset.
   * `offset`: the group offset it was committed with, when that is this replica's last
   * commit of the partition (an intent written at assignment), so that a drained stop
   * clears it like any other and a later read behind it is refused.
   */
  intentWritten(untilOffset: string, offset?: CommittedOffset): void {
    this.#covered = BigInt(untilOffset);
    if (offset) this.#committedNext = offset;
  }

  /**
   * Results committed up to `lastOffset`, with an intent reaching `intentUntil`. Doubt up
   * to `lastOffset` is settled.
   */
  batchCommitted(committed: {
    topic: string;
    lastOffset: string;
    intentUntil: string;
    assignment: number;
  }): void {
    const next = BigInt(committed.lastOffset) + 1n;
    this.#covered = BigInt(committed.intentUntil);
    this.#committedNext = {
      topic: committed.topic,
      offset: next.toString(),
      assignment: committed.assignment,
    };
    this.#settledBelow(next);
  }

  /**
   * This process's intent is being cleared from the group offset (nothing of it is in
   * flight): from now on nothing counts as covered, so any later batch writes an intent of
   * its own before it sends.
   */
  intentCleared(): void {
    this.#covered = undefined;
  }

  /** A batch returned without committing: what it handed out is kept, by offset. */
  batchCarried(outcomes: Iterable<[string, CarriedOutcome]>): void {
    for (const [offset, outcome] of outcomes) {
      this.#carried.set(offset, outcome);
      this.#carriedUnsent.delete(offset);
      void outcome.then((settled) => {
        if (
          this.#carried.get(offset) === outcome &&
          settled?.kind === 'abandoned' &&
          !settled.sent
        ) {
          this.#carriedUnsent.add(offset);
        }
      });
    }
  }

  /** Sends of the partition may still be on their way: no lookups for `quietMs`. */
  abandoned(quietMs: number, now = Date.now()): void {
    this.#quietUntil = now + quietMs;
  }

  /**
   * Another replica initialised the partition's producer. In the current assignment the
   * partition is left alone for `holdMs`; a fencing seen by a batch of an earlier
   * assignment says nothing about this one.
   */
  fenced(holdMs: number, current: boolean, now = Date.now()): void {
    // What this replica committed last is no longer the partition's offset to restore.
    this.#committedNext = undefined;
    if (current) this.#fencedUntil = now + holdMs;
  }

  /** A commit's outcome is unknown: the group offset is read again before going on. */
  commitUncertain(): void {
    this.#checked = false;
  }

  // --- questions ---------------------------------------------------------------

  /** `hold` while another replica's fencing is recent; once over, taken over again. */
  fencedState(now = Date.now()): 'hold' | 'free' {
    if (this.#fencedUntil === undefined) return 'free';
    if (now < this.#fencedUntil) return 'hold';
    this.#fencedUntil = undefined;
    this.#checked = false;
    return 'free';
  }

  /** How long lookups must still wait, ms (0: none). */
  quietFor(now = Date.now()): number {
    return this.#quietUntil === undefined ? 0 : Math.max(0, this.#quietUntil - now);
  }

  quietOver(): void {
    this.#quietUntil = undefined;
  }

  /** Whether a group offset read at a takeover is behind what this replica committed. */
  readBehind(committed: bigint | undefined): boolean {
    const own = this.#committedNext;
    if (own === undefined) return false;
    return committed === undefined || committed < BigInt(own.offset);
  }

  needsTakeover(): boolean {
    return !this.#checked;
  }

  /** Records below this offset were committed before this assignment's takeover. */
  get floor(): bigint | undefined {
    return this.#floor;
  }

  /** Whether another writer may have sent this offset, not yet looked up. */
  inDoubt(offset: string): boolean {
    return this.#doubt !== undefined && BigInt(offset) <= BigInt(this.#doubt.untilOffset);
  }

  /** The last offset in doubt, if any. */
  get doubtUntil(): string | undefined {
    return this.#doubt?.untilOffset;
  }

  /** Doubt reaching past `lastOffset`: it stays after a batch up to there commits. */
  doubtBeyond(lastOffset: string): string | undefined {
    const until = this.doubtUntil;
    return until !== undefined && BigInt(until) > BigInt(lastOffset) ? until : undefined;
  }

  /** The last offset the stored intent of this process covers, if any. */
  get coveredUntil(): string | undefined {
    return this.#covered?.toString();
  }

  covers(lastOffset: string): boolean {
    return this.#covered !== undefined && BigInt(lastOffset) <= this.#covered;
  }

  hasCarried(offset: string): boolean {
    return this.#carried.has(offset);
  }

  /** The outcome handed out for this offset by an earlier read, taken (once). */
  takeCarried(offset: string): CarriedOutcome | undefined {
    const outcome = this.#carried.get(offset);
    this.#dropCarried(offset);
    return outcome;
  }

  /**
   * The group offset this replica committed in `assignment` with nothing of the
   * partition unsettled (its intent can be cleared on a drained stop).
   */
  releasable(assignment: number): CommittedOffset | undefined {
    const next = this.#committedNext;
    if (!next || next.assignment !== assignment) return undefined;
    if (this.#doubt !== undefined) return undefined;
    for (const offset of this.#carried.keys()) {
      if (!this.#carriedUnsent.has(offset)) return undefined;
    }
    return next;
  }

  describe(): Record<string, unknown> {
    return {
      takenOver: this.#checked,
      coveredUntil: this.#covered?.toString(),
      doubtUntil: this.#doubt?.untilOffset,
      carried: this.#carried.size,
      fencedUntil: this.#fencedUntil,
      quietUntil: this.#quietUntil,
      committedNext: this.#committedNext?.offset,
    };
  }

  #settledBelow(offset: bigint): void {
    if (this.#doubt && BigInt(this.#doubt.untilOffset) < offset) this.#doubt = undefined;
    for (const key of [...this.#carried.keys()]) {
      if (BigInt(key) < offset) this.#dropCarried(key);
    }
  }

  #dropCarried(offset: string): void {
    this.#carried.delete(offset);
    this.#carriedUnsent.delete(offset);
  }
}
