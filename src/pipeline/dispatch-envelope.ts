/**
 * An envelope on its way through the dispatcher: the commands it carries, what it
 * remembers between attempts (how many went out, whether a failed one may have arrived,
 * which items to look up before the next send), and what its answer or its abandonment
 * means for each command.
 */
import type { Transport } from '../contract/index.ts';
import type { EnvelopeAnswer } from '../upstream/gateway-client.ts';
import type { Batch } from './batcher.ts';
import type { Outbound, SendOutcome } from './send-outcome.ts';

export interface Envelope {
  readonly transport: Transport;
  items: readonly Outbound[];
  attempts: number;
  /** Requests that carried the items themselves (lookups not counted). */
  sends: number;
  /** A failed send may have been processed by the gateway all the same. */
  mayHaveArrived: boolean;
  /** Items to look up with `status` before the next send, because an earlier one may have arrived. */
  readonly checkFirst: Set<Outbound>;
}

/** A batch as an envelope not tried yet; the items handed over in doubt are looked up first. */
export function envelopeOf(batch: Batch<Outbound>): Envelope {
  return {
    transport: batch.transport,
    items: batch.items,
    attempts: 0,
    sends: 0,
    mayHaveArrived: false,
    checkFirst: new Set(batch.items.filter((item) => item.inDoubt && item.reconcilable)),
  };
}

/**
 * Whether an item given up may be at the gateway: an attempt of its envelope went out,
 * or it was in doubt when it was handed over (an earlier send of it, by this process
 * or another, may have arrived). That doubt must survive every hand-over until a lookup
 * or an answer settles it: a command re-queued after a rebalance and given up again
 * before its lookup is still in doubt.
 */
export function mayHaveBeenSent(envelope: Envelope, item: Outbound): boolean {
  return envelope.sends > 0 || item.inDoubt;
}

/** How the gateway's answer to a send settles the item at `index` of the envelope. */
export function outcomeOfAnswer(
  answer: EnvelopeAnswer,
  index: number,
  attempts: number,
): SendOutcome {
  if (answer.kind === 'rejected') return { kind: 'rejected', error: answer.error, attempts };
  if (answer.kind === 'accepted') {
    return { kind: 'accepted', requestId: answer.requestId, attempts };
  }
  const outcome = answer.items[index];
  return outcome
    ? { kind: 'item', item: outcome, attempts }
    : {
        kind: 'transport',
        error: 'the gateway answered without this item',
        attempts,
        delivery: 'in_doubt',
      };
}
