/**
 * Says when a partition stops moving: commands of it were read and none has been
 * committed for `stallAfterMs`. The age is the one `ferry_oldest_uncommitted_seconds`
 * shows; this adds a warning with what the pipeline holds for the partition at that
 * moment (its lane, its commits, what ownership knows, whether fetching is paused, when
 * kafkajs last handed a batch of it over), so that a stall an operator or a chaos run
 * meets says where it sits. Warns once per stall, then every `stallAfterMs` while it
 * lasts.
 */
import type { Logger } from '../observability/logger.ts';

export interface StallWatchOptions {
  readonly logger: Logger;
  /** A partition is stalled once its oldest uncommitted command has waited this long (ms). */
  readonly stallAfterMs: number;
  /** The partitions owned now, with the age of their oldest uncommitted command (ms, 0: none). */
  readonly ages: () => ReadonlyMap<number, number>;
  /** What the pipeline holds for a partition, for the warning. */
  readonly describe: (partition: number) => Record<string, unknown>;
  /** How often ages are looked at (ms). Default a fifth of `stallAfterMs`, at least 1 s. */
  readonly checkEveryMs?: number;
}

export class StallWatch {
  readonly #options: StallWatchOptions;
  /** Per stalled partition, the age at its last warning. */
  readonly #warnedAt = new Map<number, number>();
  #timer: NodeJS.Timeout | undefined;

  constructor(options: StallWatchOptions) {
    this.#options = options;
  }

  /** Starts looking. Idempotent. */
  start(): void {
    if (this.#timer) return;
    const every =
      this.#options.checkEveryMs ?? Math.max(1_000, Math.floor(this.#options.stallAfterMs / 5));
    this.#timer = setInterval(() => this.check(), every);
    this.#timer.unref();
  }

  /** Stops looking. Idempotent. */
  stop(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
  }

  /** Looks at every owned partition once; returns the partitions warned about now. */
  check(): number[] {
    const { stallAfterMs, ages, describe, logger } = this.#options;
    const warned: number[] = [];
    const current = ages();
    for (const partition of [...this.#warnedAt.keys()]) {
      const age = current.get(partition);
      if (age !== undefined && age >= stallAfterMs) continue;
      this.#warnedAt.delete(partition);
      // A partition given up is its next owner's to move.
      if (age !== undefined)
        logger.info({ partition }, 'partition moving again: its commands commit');
    }
    for (const [partition, age] of current) {
      if (age < stallAfterMs) continue;
      const last = this.#warnedAt.get(partition);
      if (last !== undefined && age - last < stallAfterMs) continue;
      this.#warnedAt.set(partition, age);
      warned.push(partition);
      logger.warn(
        { partition, waitingMs: Math.round(age), ...describe(partition) },
        'partition stalled: commands read and nothing of it committed',
      );
    }
    return warned;
  }
}
