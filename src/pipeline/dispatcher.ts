/**
 * The dispatcher owns the send queue and the life of an envelope: queued, sent, held,
 * retried, looked up first, given up. What it leans on lives beside it: the request
 * (envelope-request.ts), the lookups of sends in doubt (reconciler.ts), the wait before a
 * retry (retry-delay.ts), the commands in doubt (commands-in-doubt.ts) and the envelope's
 * own state (dispatch-envelope.ts).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import PQueue from 'p-queue';
import { FerryError } from '../errors.ts';
import { mayHaveReachedGateway } from '../upstream/classify-error.ts';
import type { EnvelopeAnswer } from '../upstream/gateway-client.ts';
import type { Batch } from './batcher.ts';
import { isPast } from './command-deadline.ts';
import { CommandsInDoubt } from './commands-in-doubt.ts';
import {
  type Envelope,
  envelopeOf,
  mayHaveBeenSent,
  outcomeOfAnswer,
} from './dispatch-envelope.ts';
import type { DispatcherOptions } from './dispatcher-options.ts';
import { envelopePoster, type PostEnvelope } from './envelope-request.ts';
import { Reconciler } from './reconciler.ts';
import { RetryAfterHold } from './retry-after-hold.ts';
import { retryDelayMs } from './retry-delay.ts';
import type { LookupAnswer, LookupTarget, Outbound } from './send-outcome.ts';

// Kept importable from here, where they were before they moved to modules of their own.
export type { DispatcherOptions } from './dispatcher-options.ts';
export { LOOKUP_ENVELOPE_OPS } from './reconciler.ts';
export { backoffMs } from './retry-delay.ts';

/**
 * Sends envelopes through a p-queue (concurrency and rate cap), retries transient
 * failures with backoff, holds envelopes while the send gate is closed, and
 * settles every command of an envelope exactly once.
 */
export class Dispatcher {
  readonly #options: DispatcherOptions;
  readonly #queue: PQueue;
  readonly #abort = new AbortController();
  /** Envelopes waiting for a backoff timer or the gate: not in the queue, not finished. */
  #waiting = 0;
  /** Commands that may have reached the gateway and are not settled yet; settles them all. */
  readonly #doubt: CommandsInDoubt;
  /** Set by a gateway's `Retry-After`: no request of this replica goes out before it ends. */
  readonly #retryAfter: RetryAfterHold;
  /** One envelope to the gateway, in the traces of its commands when tracing is on. */
  readonly #post: PostEnvelope;
  /** The `status` lookups of sends in doubt. */
  readonly #reconciler: Reconciler;

  constructor(options: DispatcherOptions) {
    this.#options = options;
    this.#doubt = new CommandsInDoubt(options.metrics);
    this.#retryAfter = options.retryAfterHold ?? new RetryAfterHold(options.retryAfterMaxMs);
    this.#post = envelopePoster(options.gateway, options.tracer, this.#abort.signal);
    this.#queue = new PQueue(
      options.rateLimitRps > 0
        ? { concurrency: options.concurrency, intervalCap: options.rateLimitRps, interval: 1000 }
        : { concurrency: options.concurrency },
    );
    // The queue counts an envelope as pending until its task has returned, after the
    // task's own last gauge update: without this the gauge kept the last envelope in
    // flight until the next one.
    this.#queue.addEventListener('next', () => this.#updateGauges());
    this.#reconciler = new Reconciler({
      gate: options.gate,
      metrics: options.metrics,
      lookupDelayMs: options.lookupDelayMs,
      queue: this.#queue,
      retryAfter: this.#retryAfter,
      doubt: this.#doubt,
      post: this.#post,
      signal: this.#abort.signal,
    });
  }

  get inFlight(): number {
    return this.#queue.pending;
  }

  /** Milliseconds left of a hold a gateway's `Retry-After` asked for; 0 when none. */
  get retryAfterRemainingMs(): number {
    return this.#retryAfter.remainingMs;
  }

  /** Envelopes queued for a slot, waiting for a retry, or held by a closed gate. */
  get queued(): number {
    return this.#queue.size + this.#waiting;
  }

  dispatch(batch: Batch<Outbound>): void {
    const envelope = envelopeOf(batch);
    if (batch.items.some((item) => item.inDoubt)) {
      this.#doubt.add(batch.items.filter((item) => item.inDoubt));
    }
    this.#options.metrics.envelopeOperations.observe(
      { transport: envelope.transport },
      envelope.items.length,
    );
    this.#enqueue(envelope);
  }

  /**
   * Asks the gateway with `status` about these commands, in envelopes of up to
   * LOOKUP_ENVELOPE_OPS, through the same queue as sends (so bounded by its concurrency).
   * A status record counts as the command's only when it matches it (matchStatusRecord).
   * @returns one answer per target; or undefined as a whole when any envelope failed,
   *   the gate is closed or ferry stops: the caller then lets each send look itself up
   *   before going out.
   */
  async lookUp(targets: readonly LookupTarget[]): Promise<LookupAnswer[] | undefined> {
    return this.#doubt.whileLookingUp(targets.length, () => this.#reconciler.lookUp(targets));
  }

  /** Resolves when nothing is queued, waiting or in flight. */
  async drain(): Promise<void> {
    while (this.queued > 0 || this.inFlight > 0) {
      await Promise.race([this.#queue.onIdle(), new Promise((r) => setTimeout(r, 50))]);
    }
  }

  /** Abandons everything not yet sent (their commands get no result and are read again). */
  abort(): void {
    this.#abort.abort(new FerryError('aborted', 'ferry is stopping'));
    this.#queue.clear();
  }

  #enqueue(envelope: Envelope): void {
    this.#updateGauges();
    void this.#queue
      .add(() => this.#attempt(envelope), { signal: this.#abort.signal })
      .catch(() => this.#abandon(envelope));
  }

  async #attempt(envelope: Envelope): Promise<void> {
    const { gate, metrics } = this.#options;
    if (!gate.open) {
      this.#later(envelope, () => gate.whenOpen(this.#abort.signal));
      return;
    }
    // A replica that lost a partition must not send its commands: the new owner will.
    if (envelope.items.some((item) => !item.isCurrent())) {
      for (const item of envelope.items) {
        if (!item.isCurrent())
          this.#doubt.settle(item, { kind: 'abandoned', sent: mayHaveBeenSent(envelope, item) });
      }
      envelope.items = envelope.items.filter((item) => item.isCurrent());
      // Given-up items leave the lookup list too: a lookup of nothing is an empty
      // envelope, which the gateway refuses and which would fail the items still here.
      for (const item of envelope.checkFirst) {
        if (!envelope.items.includes(item)) envelope.checkFirst.delete(item);
      }
      if (envelope.items.length === 0) return;
    }
    // The gateway asked this replica to wait: out of the queue, so the wait holds no slot.
    if (this.#retryAfter.remainingMs > 0) {
      this.#later(envelope, () => this.#retryAfter.wait(this.#abort.signal));
      return;
    }
    if (envelope.checkFirst.size > 0) {
      await this.#reconcile(envelope);
      return;
    }
    // Whatever waited (the queue, a retry's backoff, a closed gate, a lookup) may have
    // taken a command past its deadline: it does not go out.
    if (!this.#dropExpired(envelope)) return;
    envelope.attempts += 1;
    envelope.sends += 1;
    this.#updateGauges();
    let answer: EnvelopeAnswer;
    try {
      answer = await this.#post(
        envelope.transport,
        'send',
        envelope.items,
        envelope.items.map((item) => item.json),
        envelope.attempts,
      );
    } catch (error: unknown) {
      // The request may have been processed even though its answer is lost (a timeout, a
      // reset after the body was written): ask before sending these again.
      if (mayHaveReachedGateway(error)) {
        envelope.mayHaveArrived = true;
        for (const item of envelope.items) if (item.reconcilable) envelope.checkFirst.add(item);
        this.#doubt.add(envelope.items);
      }
      this.#failed(envelope, FerryError.from(error, 'transport'));
      return;
    } finally {
      this.#updateGauges();
    }
    if (answer.kind === 'rejected' && answer.accessDenied) {
      this.#deniedWait(envelope, answer.error);
      return;
    }
    metrics.envelopesSent.inc({
      transport: envelope.transport,
      outcome: answer.kind === 'rejected' ? 'rejected' : 'ok',
    });
    this.#settleAnswer(envelope, answer);
  }

  /**
   * Settles the items whose deadline passed and takes them out of the envelope. Here
   * every item that may have reached the gateway before and can be looked up has been
   * (checkFirst is empty): one still here is known unsent and ends `expired`. One that
   * cannot be looked up and may have arrived ends `in_doubt`, not sent again.
   * @returns whether anything is left to send.
   */
  #dropExpired(envelope: Envelope): boolean {
    const now = Date.now();
    const expired = envelope.items.filter((item) => isPast(item.deadlineMs, now));
    if (expired.length === 0) return true;
    const attempts = envelope.attempts;
    for (const item of expired) {
      const unknown = !item.reconcilable && (envelope.mayHaveArrived || item.inDoubt);
      this.#doubt.settle(
        item,
        unknown
          ? {
              kind: 'transport',
              error:
                'its deadline passed after an attempt that may have reached the gateway: not sent again',
              attempts,
              delivery: 'in_doubt',
            }
          : { kind: 'expired', deadlineMs: item.deadlineMs as number, attempts },
      );
    }
    envelope.items = envelope.items.filter((item) => !expired.includes(item));
    this.#updateGauges();
    return envelope.items.length > 0;
  }

  #deniedWait(envelope: Envelope, error: string): void {
    const { gate, metrics } = this.#options;
    metrics.envelopesSent.inc({ transport: envelope.transport, outcome: 'access_denied' });
    if (gate.close('access_denied')) this.#options.onAccessDenied(error);
    // The key may be fixed later: the same envelope waits and is sent again, nothing fails.
    this.#later(envelope, () => gate.whenOpen(this.#abort.signal));
  }

  /**
   * Looks up the items in doubt before the envelope goes again: those the gateway knows
   * are settled, the others are sent (again).
   */
  async #reconcile(envelope: Envelope): Promise<void> {
    const check = await this.#reconciler.checkFirst(envelope);
    if (check.kind === 'access_denied') this.#deniedWait(envelope, check.error);
    else if (check.kind === 'failed') this.#failed(envelope, check.error);
    else if (envelope.items.length > 0) this.#enqueue(envelope);
  }

  #settleAnswer(envelope: Envelope, answer: EnvelopeAnswer): void {
    const attempts = envelope.attempts;
    envelope.items.forEach((item, index) => {
      this.#doubt.settle(item, outcomeOfAnswer(answer, index, attempts));
    });
  }

  #failed(envelope: Envelope, error: FerryError): void {
    const { metrics, logger, maxAttempts } = this.#options;
    if (error.code === 'aborted') {
      this.#abandon(envelope);
      return;
    }
    metrics.envelopesSent.inc({ transport: envelope.transport, outcome: 'transport_error' });
    if (error.retryable && envelope.attempts < maxAttempts) {
      metrics.envelopeRetries.inc({ transport: envelope.transport, reason: error.code });
      const delayMs = retryDelayMs(
        envelope.attempts,
        envelope.checkFirst.size > 0,
        error,
        this.#retryAfter,
        this.#options,
      );
      logger.warn(
        { transport: envelope.transport, attempts: envelope.attempts, delayMs, err: error.message },
        'envelope failed, retrying',
      );
      this.#later(envelope, () => sleep(delayMs, undefined, { signal: this.#abort.signal }));
      return;
    }
    logger.error(
      { transport: envelope.transport, attempts: envelope.attempts, err: error.message },
      'envelope failed for good',
    );
    this.#waiting += 1;
    this.#updateGauges();
    void this.#giveUp(envelope, error).finally(() => {
      this.#waiting -= 1;
      this.#updateGauges();
    });
  }

  /** Settles the commands of an envelope given up, as what a last lookup tells of them. */
  async #giveUp(envelope: Envelope, error: FerryError): Promise<void> {
    if (!(await this.#reconciler.finalCheck(envelope, error))) this.#abandon(envelope);
  }

  /** Re-queues the envelope after `wait` resolves, outside the queue so it holds no slot. */
  #later(envelope: Envelope, wait: () => Promise<unknown>): void {
    this.#waiting += 1;
    this.#updateGauges();
    wait().then(
      () => {
        this.#waiting -= 1;
        this.#enqueue(envelope);
      },
      () => {
        this.#waiting -= 1;
        this.#abandon(envelope);
      },
    );
  }

  #abandon(envelope: Envelope): void {
    this.#updateGauges();
    for (const item of envelope.items) {
      this.#doubt.settle(item, { kind: 'abandoned', sent: mayHaveBeenSent(envelope, item) });
    }
  }

  #updateGauges(): void {
    this.#options.metrics.envelopesInFlight.set(this.inFlight);
    this.#options.metrics.envelopesQueued.set(this.queued);
  }
}
