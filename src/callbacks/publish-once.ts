/**
 * Publishes each distinct callback at most once per process: a bounded LRU of the fingerprints
 * already acknowledged by Kafka, plus the publishes still in flight, so a concurrent repeat
 * waits for the first one's outcome instead of publishing again.
 *
 * This memory is per replica and lost on restart: a repeat that reaches another replica, or
 * arrives after a restart or after `capacity` newer callbacks, is published again. Consumers of
 * `ferry.status` must still tolerate duplicates (equal events but for `received_at`).
 */
import { FerryError } from '../errors.ts';

export type PublishOutcome = 'published' | 'duplicate';

export class PublishOnce {
  readonly #capacity: number;
  /** Fingerprints Kafka acknowledged, oldest first (Map keeps insertion order). */
  readonly #published = new Map<string, true>();
  /** The publish in flight for a fingerprint; settles when Kafka answers, not at our deadline. */
  readonly #inFlight = new Map<string, Promise<void>>();

  /** @param capacity how many acknowledged fingerprints to remember (at least 1). */
  constructor(capacity: number) {
    if (!Number.isInteger(capacity) || capacity < 1) {
      throw new FerryError('config', 'dedupCapacity: must be a positive integer', {
        retryable: false,
      });
    }
    this.#capacity = capacity;
  }

  /** Publishes not yet settled (for a graceful stop and for tests). */
  get inFlightCount(): number {
    return this.#inFlight.size;
  }

  /** Resolves when every publish in flight now has settled (successfully or not). */
  async settled(): Promise<void> {
    await Promise.allSettled([...this.#inFlight.values()]);
  }

  /**
   * Runs `publish` unless this fingerprint was already acknowledged (`duplicate`) or waits for
   * the publish of the same fingerprint in flight, then decides again (so a failed first attempt
   * is retried by the next caller).
   *
   * A publish that outlives `timeoutMs` keeps running: when Kafka acknowledges it later, the
   * fingerprint is remembered, so the gateway's retry is answered `duplicate` and Kafka holds
   * one event.
   *
   * @throws FerryError `kafka` (retryable) when the deadline passes first, or the error of
   *   `publish` when it fails.
   */
  async run(
    fingerprint: string,
    publish: () => Promise<void>,
    timeoutMs: number,
  ): Promise<PublishOutcome> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      if (this.#remembered(fingerprint)) return 'duplicate';
      const pending = this.#inFlight.get(fingerprint);
      if (pending === undefined) break;
      await beforeDeadline(
        pending.catch(() => undefined),
        deadline,
      );
    }
    const attempt = (async () => {
      await publish();
      this.#remember(fingerprint);
    })();
    const tracked = attempt.finally(() => this.#inFlight.delete(fingerprint));
    // Settles on its own; a rejection is observed here so it never goes unhandled.
    tracked.catch(() => undefined);
    this.#inFlight.set(fingerprint, tracked);
    await beforeDeadline(attempt, deadline);
    return 'published';
  }

  #remembered(fingerprint: string): boolean {
    if (!this.#published.has(fingerprint)) return false;
    // Refresh: a callback repeated often stays remembered.
    this.#published.delete(fingerprint);
    this.#published.set(fingerprint, true);
    return true;
  }

  #remember(fingerprint: string): void {
    this.#published.delete(fingerprint);
    this.#published.set(fingerprint, true);
    while (this.#published.size > this.#capacity) {
      const oldest = this.#published.keys().next();
      if (oldest.done) break;
      this.#published.delete(oldest.value);
    }
  }
}

/** Waits for `promise` until the epoch-milliseconds `deadline`. @throws FerryError `kafka` after it. */
async function beforeDeadline<T>(promise: Promise<T>, deadline: number): Promise<T> {
  const remainingMs = deadline - Date.now();
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new FerryError('kafka', 'Kafka did not acknowledge the status event in time')),
      Math.max(0, remainingMs),
    );
  });
  try {
    return await Promise.race([promise, expired]);
  } finally {
    clearTimeout(timer);
  }
}
