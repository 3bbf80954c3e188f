/**
 * Whether this replica fetches and sends: the operator's desired state and this
 * replica's own stops (consumption-mode.ts), the send gate they close, the in-flight
 * budget whose bounds pause and resume fetching, and the wait after `Access denied`.
 * Every change ends in `sync`, which brings the gate, the consumer's pause and the
 * metrics in line.
 */
import type { GroupConsumer } from '../kafka/kafka-port.ts';
import type { Logger } from '../observability/logger.ts';
import type { FerryMetrics } from '../observability/metrics.ts';
import { ConsumptionMode, type DesiredConsumption } from './consumption-mode.ts';
import { InFlightBudget } from './in-flight-budget.ts';
import { SendGate } from './send-gate.ts';

export interface FetchControlOptions {
  readonly metrics: FerryMetrics;
  readonly logger: Logger;
  readonly maxCommandsInFlight: number;
  readonly maxBytesInFlight?: number | undefined;
  /** After `Access denied`, try sending again after this long; 0 waits for an operator. */
  readonly accessDeniedRetryMs: number;
  /** The consumer, once started. */
  readonly consumer: () => GroupConsumer | undefined;
  /** Whether the pipeline runs: fetching resumes only then. */
  readonly running: () => boolean;
}

export class FetchControl {
  readonly #options: FetchControlOptions;
  readonly #log: Logger;
  readonly gate = new SendGate();
  /** The operator's desired state against this replica's own stops: see consumption-mode.ts. */
  readonly mode = new ConsumptionMode();
  /** Commands and bytes read and not yet done; fetching pauses while it is exhausted. */
  readonly budget: InFlightBudget;
  /** Whether fetching was on at the last sync, so that only changes are logged. */
  #fetching = true;
  /** Too many messages await their final status: fetching pauses until finals bring it down. */
  #trackingFull = false;
  #lastError: string | undefined;
  #accessDeniedTimer: NodeJS.Timeout | undefined;

  constructor(options: FetchControlOptions) {
    this.#options = options;
    this.#log = options.logger;
    this.budget = new InFlightBudget({
      maxCommands: options.maxCommandsInFlight,
      maxBytes: options.maxBytesInFlight ?? Number.POSITIVE_INFINITY,
    });
  }

  /** The last `Access denied` text, until resumed. */
  get lastError(): string | undefined {
    return this.#lastError;
  }

  /** Whether fetching should be paused now (by the mode or the budget). */
  get held(): boolean {
    return !this.mode.fetching || this.budget.exhausted || this.#trackingFull;
  }

  /**
   * Final status tracking holds as many messages as it may: fetching pauses (nothing new
   * is sent, so nothing new waits) until final statuses bring the count down.
   */
  trackingFull(full: boolean): void {
    if (full === this.#trackingFull) return;
    this.#trackingFull = full;
    this.#options.metrics.consumptionPaused.set({ reason: 'tracking' }, full ? 1 : 0);
    const consumer = this.#options.consumer();
    if (full) {
      this.#log.warn(
        'too many messages await their final status: fetching paused until final statuses come',
      );
      consumer?.pause();
    } else {
      this.#log.info('messages awaiting their final status are below the bound again');
      this.#resumeUnlessHeld();
    }
  }

  setDesired(desired: DesiredConsumption): void {
    this.mode.desired(desired);
    if (this.mode.accessDeniedCause === undefined) clearTimeout(this.#accessDeniedTimer);
    this.sync();
  }

  /** The gateway refused the key: sending stops until an operator or the retry timer resumes. */
  accessDenied(error: string): void {
    const { accessDeniedRetryMs, metrics } = this.#options;
    this.#lastError = error;
    this.mode.accessDenied(error);
    this.sync();
    metrics.accessDenied.set(1);
    this.#log.error(
      { retryInMs: accessDeniedRetryMs || undefined },
      'the gateway answered Access denied: sending stopped until the key is fixed and ferry is resumed',
    );
    if (accessDeniedRetryMs > 0) {
      clearTimeout(this.#accessDeniedTimer);
      this.#accessDeniedTimer = setTimeout(() => {
        this.#log.info('trying the gateway again after Access denied');
        this.mode.accessRetried();
        this.sync();
      }, accessDeniedRetryMs);
      this.#accessDeniedTimer.unref();
    }
  }

  /** Counts commands and bytes in flight and pauses or resumes fetching around their bounds. */
  track(delta: number, bytes: number): void {
    const transition = this.budget.change(delta, bytes);
    const consumer = this.#options.consumer();
    if (transition === 'pause') {
      this.#options.metrics.consumptionPaused.set({ reason: 'backpressure' }, 1);
      consumer?.pause();
    } else if (transition === 'resume') {
      this.#options.metrics.consumptionPaused.set({ reason: 'backpressure' }, 0);
      this.#resumeUnlessHeld();
    }
  }

  /** Brings the send gate, fetching and the metrics in line with the consumption mode. */
  sync(): void {
    const { metrics } = this.#options;
    const consumer = this.#options.consumer();
    const reasons = this.mode.pauseReasons;
    if (reasons.includes('operator')) this.gate.close('operator');
    else this.gate.release('operator');
    if (reasons.includes('access_denied')) this.gate.close('access_denied');
    else this.gate.release('access_denied');
    for (const reason of ['operator', 'access_denied', 'draining'] as const) {
      metrics.consumptionPaused.set({ reason }, reasons.includes(reason) ? 1 : 0);
    }
    if (!reasons.includes('access_denied')) metrics.accessDenied.set(0);
    const fetching = this.mode.fetching;
    if (!fetching) consumer?.pause();
    else this.#resumeUnlessHeld();
    if (fetching !== this.#fetching) {
      this.#fetching = fetching;
      if (fetching) this.#log.info('consumption resumed');
      else this.#log.info({ reasons }, 'consumption paused');
    }
  }

  /** Fetching resumes when nothing holds it (mode, budget, tracking) and the pipeline runs. */
  #resumeUnlessHeld(): void {
    if (!this.held && this.#options.running()) this.#options.consumer()?.resume();
  }

  /** No more retries after `Access denied` (the pipeline stops). */
  stop(): void {
    clearTimeout(this.#accessDeniedTimer);
  }
}
