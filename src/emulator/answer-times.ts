import { type ELDHistogram, monitorEventLoopDelay } from 'node:perf_hooks';

/** Envelopes of at most this many operations count as small (one command, or a few). */
export const SMALL_ENVELOPE_OPERATIONS = 10;

/** Percentiles of one set of answer times, in milliseconds. */
export interface AnswerTimeSummary {
  readonly count: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly maxMs: number;
}

/** How long the emulator itself took to answer, and how late its own event loop ran. */
export interface AnswerTimesStats {
  /** From the request's arrival in the handler to the last byte of the answer written, envelopes of ≤ 10 operations. */
  readonly small: AnswerTimeSummary;
  /** The same for larger envelopes. */
  readonly large: AnswerTimeSummary;
  /** The emulator's event-loop delay (timers and I/O callbacks run this late). */
  readonly eventLoopDelay: { readonly p99Ms: number; readonly maxMs: number };
}

/** Samples kept per size class; later ones are dropped until the next reset. */
const MAX_SAMPLES = 500_000;

/**
 * The gateway's own view of its answer time. A bench that runs the emulator on the same
 * machine as ferry needs it to tell the gateway's share of a send from ferry's: under load
 * the emulator answers later than its configured latency, as a busy real gateway would.
 */
export class AnswerTimes {
  #small: number[] = [];
  #large: number[] = [];
  readonly #loopDelay: ELDHistogram = monitorEventLoopDelay({ resolution: 10 });

  constructor() {
    this.#loopDelay.enable();
  }

  record(operations: number, elapsedMs: number): void {
    const samples = operations <= SMALL_ENVELOPE_OPERATIONS ? this.#small : this.#large;
    if (samples.length < MAX_SAMPLES) samples.push(elapsedMs);
  }

  stats(): AnswerTimesStats {
    return {
      small: summarise(this.#small),
      large: summarise(this.#large),
      eventLoopDelay: {
        p99Ms: round(this.#loopDelay.percentile(99) / 1e6),
        maxMs: round(this.#loopDelay.max / 1e6),
      },
    };
  }

  reset(): void {
    this.#small = [];
    this.#large = [];
    this.#loopDelay.reset();
  }

  /** Stops the event-loop sampling (its timer would otherwise keep running). */
  close(): void {
    this.#loopDelay.disable();
  }
}

function summarise(samples: readonly number[]): AnswerTimeSummary {
  if (samples.length === 0) return { count: 0, p50Ms: 0, p99Ms: 0, maxMs: 0 };
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q: number) =>
    sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)] ?? 0;
  return {
    count: sorted.length,
    p50Ms: round(at(0.5)),
    p99Ms: round(at(0.99)),
    maxMs: round(sorted[sorted.length - 1] ?? 0),
  };
}

function round(ms: number): number {
  return Math.round(ms * 10) / 10;
}
