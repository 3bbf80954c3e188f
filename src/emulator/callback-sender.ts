import { Agent, request } from 'undici';

/** Options of the callback sender. */
export interface CallbackSenderOptions {
  /** Callbacks in flight at once. Default 64. */
  readonly concurrency?: number;
  /** Attempts per callback, the first included. Default 5. */
  readonly maxAttempts?: number;
  /** Delay before the first retry; each next retry doubles it. Default 200 ms. */
  readonly firstRetryDelayMs?: number;
  /** Time allowed for the receiver's answer headers and body. Default 5_000 ms. */
  readonly requestTimeoutMs?: number;
  /** Callbacks waiting to be sent at most; more are dropped and counted failed. Default 1_000_000. */
  readonly maxPending?: number;
}

/** One callback to deliver. */
export interface CallbackJob {
  readonly url: string;
  /** The JSON body, already serialized. */
  readonly body: string;
}

interface QueuedJob extends CallbackJob {
  readonly attempt: number;
  readonly generation: number;
}

/** Counters of the callback sender. */
export interface CallbackSenderStats {
  /** Callbacks the receiver acknowledged with HTTP 200. */
  readonly sent: number;
  /** Callbacks given up on after every attempt (or dropped for a full queue). */
  readonly failed: number;
  /** Attempts that failed and were retried or given up. */
  readonly failedAttempts: number;
  /** Of those, attempts the receiver took but did not answer within the request timeout. */
  readonly timedOutAttempts: number;
  /** Callbacks scheduled, queued or in flight. */
  readonly pending: number;
}

/**
 * Delivers status callbacks: POST with `Content-Type: application/json`, at most
 * `concurrency` at a time over kept-alive connections, retried with doubling
 * back-off on anything but HTTP 200 (the spec does not show the gateway's retry
 * behaviour: docs/emulator.md documents this choice).
 */
export class CallbackSender {
  readonly #concurrency: number;
  readonly #maxAttempts: number;
  readonly #firstRetryDelayMs: number;
  readonly #requestTimeoutMs: number;
  readonly #maxPending: number;
  readonly #agent: Agent;
  readonly #timers = new Set<NodeJS.Timeout>();
  #queue: QueuedJob[] = [];
  #queueHead = 0;
  #inFlight = 0;
  #scheduled = 0;
  #generation = 0;
  #closed = false;
  #held = false;
  #sent = 0;
  #failed = 0;
  #failedAttempts = 0;
  #timedOutAttempts = 0;
  #idleWaiters: Array<() => void> = [];

  constructor(options: CallbackSenderOptions = {}) {
    this.#concurrency = options.concurrency ?? 64;
    this.#maxAttempts = options.maxAttempts ?? 5;
    this.#firstRetryDelayMs = options.firstRetryDelayMs ?? 200;
    this.#requestTimeoutMs = options.requestTimeoutMs ?? 5_000;
    this.#maxPending = options.maxPending ?? 1_000_000;
    this.#agent = new Agent({
      connections: this.#concurrency,
      keepAliveTimeout: 10_000,
      headersTimeout: this.#requestTimeoutMs,
      bodyTimeout: this.#requestTimeoutMs,
    });
  }

  /** Queues `jobs` to be sent after `delayMs` (one timer for all of them). Ignored once closed. */
  sendLater(delayMs: number, jobs: readonly CallbackJob[]): void {
    if (this.#closed || jobs.length === 0) return;
    const generation = this.#generation;
    this.#scheduled += jobs.length;
    this.#after(delayMs, () => {
      this.#scheduled -= jobs.length;
      for (const job of jobs) this.#enqueue({ ...job, attempt: 1, generation });
    });
  }

  /**
   * Holds every callback that comes due (queued, none sent) until `release()`, so a test can
   * decide when callbacks arrive (e.g. only once the receiver has lost Kafka). Callbacks
   * already in flight finish.
   */
  hold(): void {
    this.#held = true;
  }

  /** Sends what was held, and from now on each callback when it is due. */
  release(): void {
    this.#held = false;
    this.#pump();
  }

  /** Counters since the last reset. */
  stats(): CallbackSenderStats {
    return {
      sent: this.#sent,
      failed: this.#failed,
      failedAttempts: this.#failedAttempts,
      timedOutAttempts: this.#timedOutAttempts,
      pending: this.#scheduled + this.#queue.length - this.#queueHead + this.#inFlight,
    };
  }

  /** Drops every scheduled and queued callback and zeroes the counters; callbacks in flight finish uncounted. */
  reset(): void {
    this.#generation += 1;
    for (const timer of this.#timers) clearTimeout(timer);
    this.#timers.clear();
    this.#queue = [];
    this.#queueHead = 0;
    this.#scheduled = 0;
    this.#sent = 0;
    this.#failed = 0;
    this.#failedAttempts = 0;
    this.#timedOutAttempts = 0;
  }

  /** Resolves when nothing is scheduled, queued or in flight, or after `timeoutMs`. */
  async whenIdle(timeoutMs: number): Promise<boolean> {
    if (this.stats().pending === 0) return true;
    return new Promise((resolve) => {
      const timer = setTimeout(() => resolve(false), timeoutMs);
      this.#idleWaiters.push(() => {
        clearTimeout(timer);
        resolve(true);
      });
    });
  }

  /** Drops what is not sent yet, aborts what is in flight, and closes the connections. Idempotent. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.reset();
    await this.#agent.destroy();
  }

  #after(delayMs: number, run: () => void): void {
    const timer = setTimeout(() => {
      this.#timers.delete(timer);
      run();
    }, delayMs);
    this.#timers.add(timer);
  }

  #enqueue(job: QueuedJob): void {
    if (this.#queue.length - this.#queueHead >= this.#maxPending) {
      this.#failed += 1;
      return;
    }
    this.#queue.push(job);
    this.#pump();
  }

  #pump(): void {
    while (
      !this.#held &&
      this.#inFlight < this.#concurrency &&
      this.#queueHead < this.#queue.length
    ) {
      const job = this.#queue[this.#queueHead] as QueuedJob;
      this.#queueHead += 1;
      this.#inFlight += 1;
      void this.#deliver(job);
    }
    // Compact the array once its consumed head dominates, so the queue never grows without bound.
    if (this.#queueHead > 1024 && this.#queueHead * 2 > this.#queue.length) {
      this.#queue = this.#queue.slice(this.#queueHead);
      this.#queueHead = 0;
    }
    if (this.stats().pending === 0 && this.#idleWaiters.length > 0) {
      const waiters = this.#idleWaiters;
      this.#idleWaiters = [];
      for (const wake of waiters) wake();
    }
  }

  async #deliver(job: QueuedJob): Promise<void> {
    let acknowledged = false;
    let timedOut = false;
    try {
      const response = await request(job.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: job.body,
        dispatcher: this.#agent,
      });
      await response.body.dump();
      // spec: Events — "The receiver acknowledges with HTTP 200."
      acknowledged = response.statusCode === 200;
    } catch (error: unknown) {
      acknowledged = false;
      const code = (error as { code?: unknown } | null)?.code;
      timedOut = code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT';
    }
    this.#inFlight -= 1;
    if (job.generation === this.#generation && !this.#closed) {
      if (acknowledged) {
        this.#sent += 1;
      } else {
        this.#failedAttempts += 1;
        if (timedOut) this.#timedOutAttempts += 1;
        if (job.attempt < this.#maxAttempts) {
          const delayMs = this.#firstRetryDelayMs * 2 ** (job.attempt - 1);
          this.#scheduled += 1;
          this.#after(delayMs, () => {
            this.#scheduled -= 1;
            this.#enqueue({ ...job, attempt: job.attempt + 1 });
          });
        } else {
          this.#failed += 1;
        }
      }
    }
    this.#pump();
  }
}
