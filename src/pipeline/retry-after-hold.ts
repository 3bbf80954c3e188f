/**
 * The replica's hold on sending after a gateway asked it to wait (`Retry-After` on a 429
 * or 503): until the hold ends no request of this replica's dispatcher goes out, whichever
 * envelope got the answer, because the gateway's limit is the account's, not one
 * envelope's. Each answer can only lengthen the hold, and no answer sets it beyond
 * `maxMs` from when it came, so a wrong or hostile header cannot stop sending for long.
 * Timed on the monotonic clock: a wall-clock step must not shorten or stretch it.
 */
import { setTimeout as sleep } from 'node:timers/promises';

export class RetryAfterHold {
  readonly #maxMs: number;
  readonly #now: () => number;
  /** Monotonic time until which nothing is sent; 0 when there is no hold. */
  #until = 0;
  /** Told when an answer here lengthened the hold (the other lane's thread holds too). */
  #onLengthened: ((remainingMs: number) => void) | undefined;

  /**
   * @param maxMs the longest hold one answer can ask for (FERRY_RETRY_AFTER_MAX_MS); 0 turns
   *   `Retry-After` off.
   */
  constructor(maxMs: number, now: () => number = () => performance.now()) {
    this.#maxMs = maxMs;
    this.#now = now;
  }

  /** Milliseconds the hold has left; 0 when sending may go on. */
  get remainingMs(): number {
    return Math.max(0, this.#until - this.#now());
  }

  /**
   * Holds sending for `askedMs` (at most the maximum) from now, unless an earlier answer
   * holds it longer already.
   * @returns the hold left after this answer, so its envelope can wait as long.
   */
  hold(askedMs: number): number {
    const until = this.#now() + Math.min(Math.max(0, askedMs), this.#maxMs);
    if (until > this.#until) {
      this.#until = until;
      this.#onLengthened?.(this.remainingMs);
    }
    return this.remainingMs;
  }

  /**
   * `listener` hears of every hold an answer here lengthened, with the hold left: the
   * replica's other thread applies it with {@link mirror}. One listener; a second replaces it.
   */
  onLengthened(listener: (remainingMs: number) => void): void {
    this.#onLengthened = listener;
  }

  /**
   * Applies a hold another thread of this replica was asked for (`remainingMs` left there
   * when it was posted), without telling the listener: it came from there.
   */
  mirror(remainingMs: number): void {
    const until = this.#now() + Math.min(Math.max(0, remainingMs), this.#maxMs);
    if (until > this.#until) this.#until = until;
  }

  /**
   * Resolves when no hold is left, also when answers meanwhile lengthened it; rejects with
   * the signal's reason when it aborts first.
   */
  async wait(signal?: AbortSignal): Promise<void> {
    signal?.throwIfAborted();
    for (let left = this.remainingMs; left > 0; left = this.remainingMs) {
      try {
        await sleep(Math.ceil(left), undefined, signal ? { signal } : {});
      } catch (error: unknown) {
        // The reason itself, as SendGate.whenOpen rejects: the caller knows it.
        throw signal?.aborted ? signal.reason : error;
      }
    }
  }
}
