/**
 * The path of sends in doubt: `status` lookups that find out whether the gateway already
 * has a command that may have reached it, so that no command is sent twice and none ends
 * as unsent when it was delivered. Three moments ask: a takeover, about the commands an
 * earlier owner may have sent (lookUp); an envelope, about its items in doubt before they
 * are sent again (checkFirst); and an envelope given up, about its items before they end
 * as transport failures (finalCheck). A command the gateway knows ends with its status
 * record, or is refused when its id belongs to another message.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type PQueue from 'p-queue';
import { FerryError } from '../errors.ts';
import type { FerryMetrics } from '../observability/metrics.ts';
import type { EnvelopeAnswer } from '../upstream/gateway-client.ts';
import type { CommandsInDoubt } from './commands-in-doubt.ts';
import type { Envelope } from './dispatch-envelope.ts';
import type { PostEnvelope } from './envelope-request.ts';
import type { RetryAfterHold } from './retry-after-hold.ts';
import type { SendGate } from './send-gate.ts';
import {
  type LookupAnswer,
  type LookupTarget,
  lookupAnswer,
  type Outbound,
  outcomeOfLookup,
  statusOperations,
} from './send-outcome.ts';

/**
 * `status` operations per lookup envelope. A lookup is small and cheap for the gateway,
 * so the commands a takeover puts in doubt are asked about in few round trips, whatever
 * the size of send envelopes.
 */
export const LOOKUP_ENVELOPE_OPS = 500;

export interface ReconcilerOptions {
  readonly gate: SendGate;
  readonly metrics: Pick<FerryMetrics, 'reconciliations'>;
  /** Least wait after a failed attempt before its sends are looked up. */
  readonly lookupDelayMs: number;
  /** The dispatcher's queue: a lookup not made within a send's slot takes a slot of its own. */
  readonly queue: PQueue;
  readonly retryAfter: RetryAfterHold;
  readonly doubt: CommandsInDoubt;
  readonly post: PostEnvelope;
  /** Aborts when ferry stops. */
  readonly signal: AbortSignal;
}

/** What the lookup before a resend came to. */
export type CheckResult =
  /** The items the gateway knows are settled and out of the envelope; the others go (again). */
  | { readonly kind: 'checked' }
  /** The answer said `Access denied`: nothing is settled, the envelope waits for the gate. */
  | { readonly kind: 'access_denied'; readonly error: string }
  /** The lookup failed: the envelope's attempt failed with this error. */
  | { readonly kind: 'failed'; readonly error: FerryError };

export class Reconciler {
  readonly #options: ReconcilerOptions;

  constructor(options: ReconcilerOptions) {
    this.#options = options;
  }

  /**
   * Asks about these commands in envelopes of up to LOOKUP_ENVELOPE_OPS, each in a slot of
   * the queue once no `Retry-After` holds.
   * @returns one answer per target; or undefined as a whole when any envelope failed, the
   *   gate is closed or ferry stops.
   */
  async lookUp(targets: readonly LookupTarget[]): Promise<LookupAnswer[] | undefined> {
    const { gate, queue, retryAfter, post, signal } = this.#options;
    if (!gate.open) return undefined;
    const chunks: (readonly LookupTarget[])[] = [];
    for (let start = 0; start < targets.length; start += LOOKUP_ENVELOPE_OPS) {
      chunks.push(targets.slice(start, start + LOOKUP_ENVELOPE_OPS));
    }
    try {
      const answers = await Promise.all(
        chunks.map((chunk) =>
          queue.add(
            async () => {
              await retryAfter.wait(signal);
              return post('sync', 'lookup', chunk, statusOperations(chunk), 1);
            },
            { signal },
          ),
        ),
      );
      const out: LookupAnswer[] = [];
      for (const [index, answer] of answers.entries()) {
        if (answer?.kind !== 'items') return undefined;
        const chunk = chunks[index] ?? [];
        for (const [position, target] of chunk.entries()) {
          const outcome = answer.items[position];
          if (outcome === undefined) return undefined;
          out.push(lookupAnswer(target, outcome));
        }
      }
      this.#countLookups(out);
      return out;
    } catch {
      return undefined;
    }
  }

  /**
   * Looks up the envelope's items in doubt with one envelope of `status` operations, within
   * the slot of the send it comes before; counts as an attempt. Those the gateway knows end
   * with their status record (or refused, their id taken) and leave the envelope; the others
   * are proven unsent.
   */
  async checkFirst(envelope: Envelope): Promise<CheckResult> {
    const { doubt, post } = this.#options;
    const toCheck = envelope.items.filter((item) => envelope.checkFirst.has(item));
    envelope.attempts += 1;
    let answer: EnvelopeAnswer;
    try {
      answer = await post('sync', 'lookup', toCheck, statusOperations(toCheck), envelope.attempts);
    } catch (error: unknown) {
      return { kind: 'failed', error: FerryError.from(error, 'transport') };
    }
    if (answer.kind === 'rejected') {
      return answer.accessDenied
        ? { kind: 'access_denied', error: answer.error }
        : {
            kind: 'failed',
            error: new FerryError('transport', `status lookup refused: ${answer.error}`),
          };
    }
    if (answer.kind !== 'items') {
      return {
        kind: 'failed',
        error: new FerryError('transport', 'status lookup answered without items'),
      };
    }
    envelope.checkFirst.clear();
    const found = new Set<Outbound>();
    const answers = toCheck.map((item, index): LookupAnswer => {
      const outcome = answer.items[index];
      return outcome ? lookupAnswer(item, outcome) : { kind: 'unsent' };
    });
    this.#countLookups(answers);
    toCheck.forEach((item, index) => {
      const settled = outcomeOfLookup(answers[index] as LookupAnswer, envelope.attempts);
      if (!settled) return;
      found.add(item);
      doubt.settle(item, settled);
    });
    envelope.items = envelope.items.filter((item) => !found.has(item));
    // The gateway does not know the others.
    doubt.provenUnsent(toCheck);
    return { kind: 'checked' };
  }

  /**
   * Before commands end as transport failures (and dead letters), what can be known
   * about their delivery is found out: a command the gateway may have got is looked up
   * once its request can have landed; found, it ends as delivered after all; not found,
   * it is proven unsent; where no lookup can tell, it is marked in doubt. Settles every
   * item of the envelope.
   * @returns false, with nothing settled, when ferry stopped before the lookup.
   */
  async finalCheck(envelope: Envelope, error: FerryError): Promise<boolean> {
    const attempts = envelope.attempts;
    // A send of this envelope may have arrived, or the item came in doubt (an earlier
    // send of it, by this process or another, may have): only a lookup can say unsent.
    const mayHave = (item: Outbound) => envelope.mayHaveArrived || item.inDoubt;
    const toCheck = envelope.items.filter((item) => mayHave(item) && item.reconcilable);
    let answers: LookupAnswer[] | undefined;
    if (toCheck.length > 0) {
      try {
        await sleep(this.#options.lookupDelayMs, undefined, { signal: this.#options.signal });
      } catch {
        return false;
      }
      answers = await this.lookUp(toCheck);
    }
    const checked = new Map(toCheck.map((item, index) => [item, answers?.[index]]));
    for (const item of envelope.items) {
      const known = checked.get(item);
      const settled = known && outcomeOfLookup(known, attempts);
      this.#options.doubt.settle(
        item,
        settled ?? {
          kind: 'transport',
          error: error.message,
          attempts,
          delivery: known?.kind === 'unsent' || !mayHave(item) ? 'unsent' : 'in_doubt',
        },
      );
    }
    return true;
  }

  /** Lookups by what they found: the gateway knew the id (`found`) or not. */
  #countLookups(answers: readonly LookupAnswer[]): void {
    const found = answers.filter((answer) => answer.kind !== 'unsent').length;
    this.#options.metrics.reconciliations.inc({ outcome: 'found' }, found);
    this.#options.metrics.reconciliations.inc({ outcome: 'not_found' }, answers.length - found);
  }
}
