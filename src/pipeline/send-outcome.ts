/**
 * What a command's trip to the gateway can end in, and what a `status` lookup can say
 * about a command: the vocabulary shared by the dispatcher (which settles outcomes),
 * the batch processor (which carries them across reads) and the results (which report
 * them).
 */
import type { ItemOutcome, OperationType } from '../contract/index.ts';
import type { CommandSpan } from '../observability/tracing.ts';
import type { FirstCompletion } from './dedupe-store.ts';
import { idTakenError, matchStatusRecord } from './status-match.ts';

/** How one command's trip to the gateway ended. */
export type SendOutcome =
  | { readonly kind: 'item'; readonly item: ItemOutcome; readonly attempts: number }
  | { readonly kind: 'accepted'; readonly requestId: string; readonly attempts: number }
  | { readonly kind: 'rejected'; readonly error: string; readonly attempts: number }
  /**
   * Gave up after retries. `unsent` when no attempt can have reached the gateway, or a
   * final `status` lookup found nothing; `in_doubt` when it may have been delivered.
   */
  | {
      readonly kind: 'transport';
      readonly error: string;
      readonly attempts: number;
      readonly delivery: Delivery;
    }
  /** The gateway already had it (found by `status` before a resend): its status record. */
  | { readonly kind: 'reconciled'; readonly record: unknown; readonly attempts: number }
  /**
   * Given up without an answer (the partition moved, or ferry is stopping): it gets no
   * result and is read again. `sent` when an earlier attempt went out, so the gateway
   * may have it and it is looked up before it is sent again.
   */
  | { readonly kind: 'abandoned'; readonly sent: boolean }
  /**
   * Not sent: an earlier command with the same id reached the gateway (or may have) on
   * this partition within the dedupe window; its first completion.
   */
  | { readonly kind: 'duplicate'; readonly first: FirstCompletion }
  /**
   * Not sent: its deadline passed before it could go out, and the gateway never got it
   * (a lookup proved it where an earlier attempt may have arrived).
   */
  | { readonly kind: 'expired'; readonly deadlineMs: number; readonly attempts: number };

/** What ferry knows about whether a command it gave up on reached the gateway. */
export type Delivery = 'unsent' | 'in_doubt';

/** What one `status` lookup said about one command. */
export type LookupAnswer =
  /** The gateway has this command: its status record. */
  | { readonly kind: 'sent'; readonly record: unknown }
  /** The gateway does not know the id. */
  | { readonly kind: 'unsent' }
  /** The gateway knows the id for another message: the command must not be sent. */
  | { readonly kind: 'taken'; readonly error: string };

/** A command to look up: its client id and operation type. */
export interface LookupTarget {
  readonly id: unknown;
  readonly type: OperationType;
  /** The command's trace, when tracing is on: its requests become child spans. */
  readonly span?: CommandSpan | undefined;
}

/** One operation waiting for its envelope's answer. */
export interface Outbound extends LookupTarget {
  readonly json: string;
  readonly id: unknown;
  readonly type: OperationType;
  /** A send with a numeric id: `status` can tell whether the gateway already has it. */
  readonly reconcilable: boolean;
  /** It may have reached the gateway before (a send intent without a result): look it up first. */
  readonly inDoubt: boolean;
  /** After this (ms since the epoch) it must not go out; none when undefined. */
  readonly deadlineMs?: number | undefined;
  /** False once this replica no longer owns the command's partition: it must not be sent any more. */
  isCurrent(): boolean;
  settle(outcome: SendOutcome): void;
}

/** The `status` operations that ask about these commands, one per command. */
export function statusOperations(targets: readonly LookupTarget[]): string[] {
  return targets.map((target) => `{"type":"status","id":${JSON.stringify(target.id)}}`);
}

/**
 * How a command ends when a lookup settled it: delivered (its status record) or refused
 * (its id belongs to another message); undefined when the gateway does not know it.
 */
export function outcomeOfLookup(known: LookupAnswer, attempts: number): SendOutcome | undefined {
  if (known.kind === 'sent') return { kind: 'reconciled', record: known.record, attempts };
  if (known.kind === 'taken') return { kind: 'rejected', error: known.error, attempts };
  return undefined;
}

/** A `status` item read against the command it was asked for. */
export function lookupAnswer(target: LookupTarget, outcome: ItemOutcome): LookupAnswer {
  // spec: status. A failed item is an id the gateway does not know.
  if (!outcome.success) return { kind: 'unsent' };
  if (matchStatusRecord(target.type, target.id, outcome.data) === 'other-command') {
    return { kind: 'taken', error: idTakenError(target.id, outcome.data) };
  }
  return { kind: 'sent', record: outcome.data };
}
