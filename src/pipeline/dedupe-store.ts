/**
 * The command ids of one partition whose message reached the gateway (or may have),
 * each with its first completion, for a window of time and up to a number of ids; and
 * the ids handed out and not yet committed, so that a copy arriving meanwhile waits for
 * its first instead of going out beside it. Named transitions: `cleared` (a takeover:
 * what this replica knew may be stale), `restored` (a record of the dedupe topic read
 * back), `handedOut` (a command went out), `committed` (its completion is durable),
 * `settled` (its result, whatever it was, is committed).
 */
import type { SendOutcome } from './send-outcome.ts';

/** The first completion of a command id: what a copy's result repeats. */
export interface FirstCompletion {
  /** The commands partition and offset of the first command with the id. */
  readonly partition: number;
  readonly offset: string;
  /** The first's `success`: true, or false when it may have been delivered (`in_doubt`). */
  readonly success: boolean;
  readonly msgId?: unknown;
  readonly requestId?: string;
  /** `in_doubt` when ferry gave up on the first and the gateway may have it. */
  readonly delivery?: 'in_doubt';
  /** When the first's result was settled (its `completed_at`). */
  readonly completedAt: string;
  /** The same, ms since the epoch: the window counts from here. */
  readonly atMs: number;
}

interface HandedOut {
  readonly offset: bigint;
  readonly outcome: Promise<SendOutcome | undefined>;
}

export interface DedupeLimits {
  /** How long a completed id keeps its copies from being sent (ms). */
  readonly windowMs: number;
  /** Completed ids kept per partition at most; the oldest go first. */
  readonly maxIds: number;
}

/**
 * A completion as kept: a few hundred thousand of these per partition may be held, so
 * the partition and the time's text are not (both follow from the rest).
 */
interface Kept {
  readonly offset: number;
  readonly atMs: number;
  /** 1: succeeded; 2: given up on, may have arrived (`in_doubt`). */
  readonly state: 1 | 2;
  readonly msgId?: unknown;
  readonly requestId?: string;
}

function kept(first: FirstCompletion): Kept {
  const entry: { -readonly [K in keyof Kept]: Kept[K] } = {
    offset: Number(first.offset),
    atMs: first.atMs,
    state: first.success ? 1 : 2,
  };
  if (first.msgId !== undefined) entry.msgId = first.msgId;
  if (first.requestId !== undefined) entry.requestId = first.requestId;
  return entry;
}

function completion(partition: number, entry: Kept): FirstCompletion {
  return {
    partition,
    offset: String(entry.offset),
    success: entry.state === 1,
    completedAt: new Date(entry.atMs).toISOString(),
    atMs: entry.atMs,
    ...(entry.state === 2 ? { delivery: 'in_doubt' as const } : {}),
    ...(entry.msgId !== undefined ? { msgId: entry.msgId } : {}),
    ...(entry.requestId !== undefined ? { requestId: entry.requestId } : {}),
  };
}

export class DedupeStore {
  readonly #limits: DedupeLimits;
  /** The partition's number, which every completion kept here shares. */
  #partition = 0;
  /** In completion order, oldest first (re-inserted on update), so eviction takes the front. */
  readonly #completed = new Map<string, Kept>();
  readonly #handedOut = new Map<string, HandedOut>();

  constructor(limits: DedupeLimits) {
    this.#limits = limits;
  }

  /** Completed ids kept now. */
  get size(): number {
    return this.#completed.size;
  }

  // --- transitions -------------------------------------------------------------

  /** A takeover begins: what is known is read back from the dedupe topic. */
  cleared(): void {
    this.#completed.clear();
    this.#handedOut.clear();
  }

  /** A record of the dedupe topic, read back in write order. */
  restored(id: string, first: FirstCompletion, now = Date.now()): void {
    if (now - first.atMs >= this.#limits.windowMs) return;
    this.#keep(id, first);
  }

  /** A command with `id` at `offset` went out (or waits for its first): its outcome is `outcome`. */
  handedOut(id: string, offset: string, outcome: Promise<SendOutcome | undefined>): void {
    this.#handedOut.set(id, { offset: BigInt(offset), outcome });
  }

  /** The first completion of `id` is committed with its result. */
  committed(id: string, first: FirstCompletion): void {
    const out = this.#handedOut.get(id);
    if (out !== undefined && out.offset <= BigInt(first.offset)) this.#handedOut.delete(id);
    this.#keep(id, first);
  }

  /**
   * The command with `id` at `offset` has its result committed, whatever it was: it is
   * on its way no longer (nor is any copy before it).
   */
  settled(id: string, offset: string): void {
    const out = this.#handedOut.get(id);
    if (out !== undefined && out.offset <= BigInt(offset)) this.#handedOut.delete(id);
  }

  /** Commands with an id handed out and not yet committed. */
  get onTheirWay(): number {
    return this.#handedOut.size;
  }

  // --- questions ---------------------------------------------------------------

  /** The committed first completion of `id` within the window, if any. */
  firstOf(id: string, now = Date.now()): FirstCompletion | undefined {
    const entry = this.#completed.get(id);
    if (entry === undefined) return undefined;
    if (now - entry.atMs < this.#limits.windowMs) return completion(this.#partition, entry);
    this.#completed.delete(id);
    return undefined;
  }

  /**
   * The outcome of an earlier command with `id` (below `offset`) handed out and not yet
   * committed, if any. A copy waits for it.
   */
  earlierOf(id: string, offset: string): Promise<SendOutcome | undefined> | undefined {
    const out = this.#handedOut.get(id);
    return out !== undefined && out.offset < BigInt(offset) ? out.outcome : undefined;
  }

  /** The offset of the command with `id` handed out and not yet committed, if any. */
  handedOutOffset(id: string): string | undefined {
    return this.#handedOut.get(id)?.offset.toString();
  }

  #keep(id: string, first: FirstCompletion): void {
    this.#partition = first.partition;
    this.#completed.delete(id);
    this.#completed.set(id, kept(first));
    const now = Date.now();
    for (const [oldest, entry] of this.#completed) {
      const expired = now - entry.atMs >= this.#limits.windowMs;
      if (!expired && this.#completed.size <= this.#limits.maxIds) break;
      this.#completed.delete(oldest);
    }
  }
}
