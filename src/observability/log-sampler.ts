/**
 * A rate limit for log lines that anyone who can reach a port can cause (a callback with a
 * wrong token, an admin call without one): each would otherwise write a line, so a loop of
 * requests fills the disk and buries everything else. Per kind of line, the first few of
 * each interval are written; the rest are only counted, and one summary line per interval
 * says how many were left out. What the lines stood for is still counted in full by the
 * caller's metrics; this bounds the log, never the counting.
 */
import { FerryError } from '../errors.ts';
import type { Logger } from './logger.ts';

/** The levels a sampled line can have: the ones a flood of requests produces. */
export type SampledLevel = 'warn' | 'error';

/** Time and timers, injected so tests can drive the intervals without waiting. */
export interface SamplerClock {
  /** Milliseconds on a monotonic clock. */
  now(): number;
  /** Runs `callback` after `ms`; must not keep the process alive. */
  setTimer(callback: () => void, ms: number): unknown;
  clearTimer(handle: unknown): void;
}

/** Lines of one kind written per interval by default; the rest are summarised. */
export const DEFAULT_LINES_PER_INTERVAL = 10;
/** Default interval, ms: a minute, so a steady flood costs at most 11 lines a minute per kind. */
export const DEFAULT_SAMPLE_INTERVAL_MS = 60_000;

/** The `msg` of a summary line. */
export const SUPPRESSED_MESSAGE = 'Repeated log lines were suppressed.';

export interface LogSamplerOptions {
  /** Where both the admitted lines and the summaries go. */
  readonly logger: Logger;
  /** Lines of one kind written per interval. Default {@link DEFAULT_LINES_PER_INTERVAL}. */
  readonly linesPerInterval?: number;
  /** Interval length, ms. Default {@link DEFAULT_SAMPLE_INTERVAL_MS}. */
  readonly intervalMs?: number;
  /** Default: `performance.now()` and unref'd Node timers. */
  readonly clock?: SamplerClock;
}

/** One kind's current interval: it starts with the first line of the kind after the last one ended. */
interface Interval {
  readonly startedMs: number;
  readonly level: SampledLevel;
  written: number;
  suppressed: number;
  /** Set once a line was suppressed: writes the summary when the interval ends. */
  timer?: unknown;
}

const systemClock: SamplerClock = {
  now: () => performance.now(),
  setTimer: (callback, ms) => setTimeout(callback, ms).unref(),
  clearTimer: (handle) => clearTimeout(handle as NodeJS.Timeout),
};

/**
 * Writes log lines of a kind at most `linesPerInterval` times per interval, then one
 * summary line (`kind`, `suppressed`, `written`, `intervalMs`) when the interval ends.
 * Kinds must be a fixed set named in code (one interval is kept per kind), never a value
 * taken from a request.
 */
export class LogSampler {
  readonly #logger: Logger;
  readonly #limit: number;
  readonly #intervalMs: number;
  readonly #clock: SamplerClock;
  readonly #intervals = new Map<string, Interval>();

  /** @throws FerryError `config` when a limit is not a positive integer. */
  constructor(options: LogSamplerOptions) {
    this.#logger = options.logger;
    this.#limit = positive(
      'linesPerInterval',
      options.linesPerInterval ?? DEFAULT_LINES_PER_INTERVAL,
    );
    this.#intervalMs = positive('intervalMs', options.intervalMs ?? DEFAULT_SAMPLE_INTERVAL_MS);
    this.#clock = options.clock ?? systemClock;
  }

  /** Logs at `warn` unless this kind already used its lines of the interval. @returns whether it was written. */
  warn(kind: string, fields: Record<string, unknown>, message: string): boolean {
    return this.#log('warn', kind, fields, message);
  }

  /** Logs at `error` unless this kind already used its lines of the interval. @returns whether it was written. */
  error(kind: string, fields: Record<string, unknown>, message: string): boolean {
    return this.#log('error', kind, fields, message);
  }

  /**
   * Ends every interval now, writing the summaries of those that suppressed lines. For a
   * component's stop, so the last count is not lost with the process; lines after it
   * start new intervals.
   */
  flush(): void {
    for (const [kind, interval] of [...this.#intervals]) this.#end(kind, interval);
  }

  #log(
    level: SampledLevel,
    kind: string,
    fields: Record<string, unknown>,
    message: string,
  ): boolean {
    const now = this.#clock.now();
    let interval = this.#intervals.get(kind);
    if (interval && now - interval.startedMs >= this.#intervalMs) {
      // Its timer is due but has not run yet (a busy event loop): end it here, in order.
      this.#end(kind, interval);
      interval = undefined;
    }
    if (!interval) {
      interval = { startedMs: now, level, written: 0, suppressed: 0 };
      this.#intervals.set(kind, interval);
    }
    if (interval.written < this.#limit) {
      interval.written += 1;
      this.#logger[level](fields, message);
      return true;
    }
    interval.suppressed += 1;
    if (interval.timer === undefined) {
      const ending = interval;
      ending.timer = this.#clock.setTimer(
        () => this.#end(kind, ending),
        ending.startedMs + this.#intervalMs - now,
      );
    }
    return false;
  }

  #end(kind: string, interval: Interval): void {
    if (this.#intervals.get(kind) !== interval) return;
    this.#intervals.delete(kind);
    if (interval.timer !== undefined) this.#clock.clearTimer(interval.timer);
    if (interval.suppressed === 0) return;
    this.#logger[interval.level](
      {
        kind,
        suppressed: interval.suppressed,
        written: interval.written,
        intervalMs: this.#intervalMs,
      },
      SUPPRESSED_MESSAGE,
    );
  }
}

function positive(name: string, value: number): number {
  if (!Number.isSafeInteger(value) || value < 1) {
    throw new FerryError('config', `${name}: must be a positive integer`, { retryable: false });
  }
  return value;
}
