import {
  itemErrorCode,
  sendOperationTypes,
  specificItemErrorCodes,
  type Transport,
} from '../contract/index.ts';
import type { Command } from './command.ts';
import { settledAt } from './outcome-times.ts';
import type { Delivery, SendOutcome } from './send-outcome.ts';

/**
 * Where a command ended (README, Topics and records: Result). `validation`: never sent, because it broke a rule,
 * its record was over a limit, it was a copy or too late (`duplicate`, `expired`), or ferry
 * failed on it (`internal error: …`).
 */
export type Stage = 'validation' | 'upstream' | 'transport';

/**
 * Why a command failed, for programs (README, Topics and records: error codes); present
 * whenever `success` is false, next to the human `error` text.
 * - `validation`: broke a contract rule, or its record is not a JSON object; never sent
 * - `too_large`: its record is over FERRY_COMMAND_MAX_BYTES; never sent
 * - `internal`: ferry failed on it (a bug); whether it was sent is unknown
 * - `gateway_item_error`: the gateway answered its item with `success` false, with a text
 *   that is none of the known ones
 * - `gateway_sender_rejected`, `gateway_invalid_type`, `gateway_insufficient_balance`,
 *   `gateway_message_not_found`: the same, for a known text (src/contract/item-errors.ts)
 * - `gateway_rejected`: the gateway refused the whole envelope, or has its id for another message
 * - `access_denied`: the gateway refused the API key (ferry waits instead; kept for readers)
 * - `transport`: gave up after retries, and the gateway never got it (`delivery: unsent`)
 * - `in_doubt`: gave up after retries, and the gateway may have it (`delivery: in_doubt`)
 * - `duplicate`: an earlier command with its id reached the gateway (or may have) on its
 *   partition within FERRY_DEDUPE_WINDOW_MS; not sent (`duplicate_of`)
 * - `expired`: its deadline (`ferry-expires-at`, or FERRY_EXPIRE_AFTER_MS) passed before
 *   it could go out; never sent, and never will be (`expires_at`)
 */
export const errorCodes = [
  'validation',
  'too_large',
  'internal',
  'gateway_item_error',
  ...specificItemErrorCodes,
  'gateway_rejected',
  'access_denied',
  'transport',
  'in_doubt',
  'duplicate',
  'expired',
] as const;
export type ErrorCode = (typeof errorCodes)[number];

/** The value of a result record: exactly one per command record. */
export interface Result {
  /** The command's id as written: may be an exact number (src/json/number-source.ts), so encode it, never String() it. */
  id?: unknown;
  type?: unknown;
  success: boolean;
  /** Human text; the gateway's own words, unchanged, when the gateway gave them. */
  error?: string;
  /** Machine-readable reason; set exactly when `success` is false. */
  code?: ErrorCode;
  /** The offending field's path (`phones[0]`, `viber.signature`), for validation failures. */
  field?: string;
  stage: Stage;
  transport: Transport;
  msg_id?: unknown;
  parts?: unknown;
  request_id?: string;
  data?: unknown;
  /**
   * Stage `transport` only: `unsent` when ferry knows the gateway never got the command
   * (safe to send again), `in_doubt` when it may have (look it up before sending again).
   */
  delivery?: Delivery;
  /** The gateway already had this command (found with `status` after a lost answer or a takeover): it was not sent again. */
  reconciled?: true;
  /** Code `duplicate` only: the first command with this id, whose outcome this one shares. */
  duplicate_of?: DuplicateOf;
  /** The command's deadline, when it had one (RFC 3339, UTC): after it, it is never sent. */
  expires_at?: string;
  attempts: number;
  completed_at: string;
  /**
   * Something did not fit the results topic's record limit or could not be encoded: the
   * fields concerned (`id`, `type`, `error`, `data`, `msg_id`, `request_id`, `parts`) hold a
   * string preview of their beginning instead, and an overlong key was cut.
   */
  truncated?: true;
}

/** The first command with a duplicate's id: where it was and how it ended. */
export interface DuplicateOf {
  readonly partition: number;
  readonly offset: string;
  readonly success: boolean;
  /** `in_doubt` when ferry gave up on the first and the gateway may have it. */
  readonly delivery?: Delivery;
  readonly completed_at: string;
}

function base(command: Command, success: boolean, stage: Stage, attempts: number): Result {
  const result: Result = {
    success,
    stage,
    transport: command.transport,
    attempts,
    completed_at: new Date().toISOString(),
  };
  if (command.id !== undefined) result.id = command.id;
  if (command.type !== undefined) result.type = command.type;
  return result;
}

/** The result of a command that broke a rule and was never sent. */
export function validationResult(command: Command & { kind: 'invalid' }): Result {
  const result = base(command, false, 'validation', 0);
  result.error = command.error;
  result.code =
    command.rule === INTERNAL_RULE
      ? 'internal'
      : command.rule === 'too_large'
        ? 'too_large'
        : 'validation';
  if (command.field !== undefined) result.field = command.field;
  return result;
}

/** Prefix of the error of a record ferry failed on (a bug, never the command's fault). */
export const INTERNAL_ERROR_PREFIX = 'internal error: ';
/** The validation rule and dead-letter reason of a record ferry failed on. */
export const INTERNAL_RULE = 'internal';

/**
 * The result of a record ferry failed on while reading it or building its output. Built from
 * nothing but the transport and the message, so it cannot fail itself.
 */
export function internalErrorResult(transport: Transport, message: string): Result {
  return {
    success: false,
    error: `${INTERNAL_ERROR_PREFIX}${message}`,
    code: 'internal',
    stage: 'validation',
    transport,
    attempts: 0,
    completed_at: new Date().toISOString(),
  };
}

/** The result of a command the gateway answered for, or that gave up after retries. */
export function sendResult(
  command: Command & { kind: 'valid' },
  outcome: Exclude<SendOutcome, { kind: 'abandoned' }>,
): Result {
  const result = outcomeResult(command, outcome);
  if (command.deadline) result.expires_at = new Date(command.deadline.atMs).toISOString();
  // When the send completed, not when this result was built (see outcome-times.ts).
  const completedAt = settledAt(outcome);
  if (completedAt !== undefined) result.completed_at = completedAt;
  return result;
}

function outcomeResult(
  command: Command & { kind: 'valid' },
  outcome: Exclude<SendOutcome, { kind: 'abandoned' }>,
): Result {
  switch (outcome.kind) {
    case 'expired': {
      const result = base(command, false, 'validation', outcome.attempts);
      result.code = 'expired';
      result.error = `its deadline ${new Date(outcome.deadlineMs).toISOString()} passed before it could be sent: not sent, and never will be`;
      return result;
    }
    case 'duplicate': {
      const { first } = outcome;
      const result = base(command, false, 'validation', 0);
      result.code = 'duplicate';
      result.error = `id ${String(command.id)} was handled at offset ${first.offset} of partition ${first.partition} (${first.completedAt}): not sent again`;
      if (first.msgId !== undefined) result.msg_id = first.msgId;
      if (first.requestId !== undefined) result.request_id = first.requestId;
      result.duplicate_of = {
        partition: first.partition,
        offset: first.offset,
        success: first.success,
        ...(first.delivery ? { delivery: first.delivery } : {}),
        completed_at: first.completedAt,
      };
      return result;
    }
    case 'transport': {
      const result = base(command, false, 'transport', outcome.attempts);
      result.error = outcome.error;
      result.code = outcome.delivery === 'in_doubt' ? 'in_doubt' : 'transport';
      result.delivery = outcome.delivery;
      return result;
    }
    case 'rejected': {
      const result = base(command, false, 'upstream', outcome.attempts);
      result.error = outcome.error;
      result.code = 'gateway_rejected';
      return result;
    }
    case 'reconciled': {
      const result = base(command, true, 'upstream', outcome.attempts);
      const record = outcome.record as { msg_id?: unknown } | null;
      if (record && typeof record === 'object' && record.msg_id !== undefined) {
        result.msg_id = record.msg_id;
      }
      result.reconciled = true;
      return result;
    }
    case 'accepted': {
      const result = base(command, true, 'upstream', outcome.attempts);
      result.request_id = outcome.requestId;
      return result;
    }
    case 'item': {
      const { item } = outcome;
      const result = base(command, item.success, 'upstream', outcome.attempts);
      if (!item.success) {
        result.error = item.error;
        result.code = itemErrorCode(item.error);
        return result;
      }
      const data = item.data;
      if (sendOperationTypes.has(command.type) && typeof data === 'object' && data !== null) {
        // spec: Send result payload: the message id and the billed parts.
        const send = data as { msg_id?: unknown; parts?: unknown };
        if (send.msg_id !== undefined) result.msg_id = send.msg_id;
        if (send.parts !== undefined) result.parts = send.parts;
      } else {
        result.data = data;
      }
      return result;
    }
  }
}
