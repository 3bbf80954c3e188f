/**
 * Reading the gateway's answers (spec: Endpoints, Response envelope, Response item, Async
 * response, Errors). The HTTP status is 200 in all cases, so everything is in the body:
 * top-level `success` first, then `success` of each item.
 */
import { FerryError } from '../errors.ts';

/** Top-level `error` when the API key is rejected (spec: Authentication rule 4, Errors). */
export const ACCESS_DENIED = 'Access denied';
/** Item `error` when `type` is `whatsapp` (spec: Endpoints, Errors). */
export const INVALID_MESSAGE_TYPE = 'Invalid message type';
/** Item `error` when the sender signature is rejected for a send (spec: Errors). */
export const ALPHA_NAME_ERROR = 'Error in Alpha-name';

/** One operation's outcome, in the position of its operation. */
export type ItemOutcome =
  | { readonly success: true; readonly data: unknown }
  | { readonly success: false; readonly error: string; readonly data?: unknown };

/** The decoded answer of the sync endpoint. */
export type SyncResponse =
  | { readonly kind: 'items'; readonly items: readonly ItemOutcome[] }
  | { readonly kind: 'rejected'; readonly accessDenied: boolean; readonly error: string };

/** The decoded answer of the async endpoint. */
export type AsyncResponse =
  | { readonly kind: 'accepted'; readonly requestId: string }
  | { readonly kind: 'rejected'; readonly accessDenied: boolean; readonly error: string };

/** Text used when a rejection or a failed item carries no `error` string. */
export const MISSING_ERROR_TEXT = 'gateway gave no error text';

function transportError(message: string, cause?: unknown): FerryError {
  // Retryable: a garbled or truncated answer says nothing about the operations themselves.
  return new FerryError('transport', message, { cause, retryable: true });
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Reads `success` tolerantly: the wire carries a boolean, but some tables of the spec call
 * it an integer, so 1 and 0 are read too. Anything else is not the documented shape.
 */
function readSuccess(value: unknown): boolean | undefined {
  if (value === true || value === 1) return true;
  if (value === false || value === 0) return false;
  return undefined;
}

function parseObject(body: string, endpoint: string): Record<string, unknown> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch (error: unknown) {
    // The body itself is not quoted: it may hold phone numbers (personal data).
    throw transportError(`${endpoint} answer is not JSON (${body.length} characters)`, error);
  }
  if (!isObject(parsed)) throw transportError(`${endpoint} answer is not a JSON object`);
  return parsed;
}

function rejection(envelope: Record<string, unknown>): {
  kind: 'rejected';
  accessDenied: boolean;
  error: string;
} {
  const error = typeof envelope.error === 'string' ? envelope.error : MISSING_ERROR_TEXT;
  return { kind: 'rejected', accessDenied: error === ACCESS_DENIED, error };
}

/**
 * Reads a sync endpoint answer for the operations of one envelope, given in the order sent
 * (only their `id`s are looked at; `undefined` for operations without one).
 *
 * Top-level `success` false is a rejection of the whole envelope; `accessDenied` is true when
 * `error` is exactly `Access denied` (an account error that will not heal by retrying).
 * Otherwise `data` holds one item per operation, same order (spec: Errors); each becomes an
 * {@link ItemOutcome}. A failed item without an `error` string gets {@link MISSING_ERROR_TEXT}.
 *
 * @throws FerryError code `transport` (retryable) when the body is not JSON or not an object,
 *   `success` is missing, `data` is not an array of objects with a `success`, it has the
 *   wrong number of items, or an item's `data.id` differs from its operation's `id`
 *   (compared as `String()`; checked only when both are present, since payloads of
 *   operations without an id, such as a created template, may carry an `id` of their own).
 */
export function readSyncResponse(body: string, operationIds: readonly unknown[]): SyncResponse {
  const envelope = parseObject(body, 'sync endpoint');
  const success = readSuccess(envelope.success);
  if (success === undefined) throw transportError('sync endpoint answer has no boolean success');
  if (!success) return rejection(envelope);
  const data = envelope.data;
  if (!Array.isArray(data)) throw transportError('sync endpoint answer has no data array');
  if (data.length !== operationIds.length) {
    throw transportError(
      `sync endpoint answered ${data.length} items for ${operationIds.length} operations`,
    );
  }
  const items: ItemOutcome[] = new Array(data.length);
  for (let index = 0; index < data.length; index++) {
    const item: unknown = data[index];
    if (!isObject(item)) throw transportError(`sync endpoint item ${index} is not an object`);
    const itemSuccess = readSuccess(item.success);
    if (itemSuccess === undefined) {
      throw transportError(`sync endpoint item ${index} has no boolean success`);
    }
    const operationId = operationIds[index];
    const payload = item.data;
    if (operationId !== undefined && isObject(payload) && payload.id !== undefined) {
      if (String(payload.id) !== String(operationId)) {
        throw transportError(
          `sync endpoint item ${index} carries id ${String(payload.id)} for operation id ${String(operationId)}`,
        );
      }
    }
    if (itemSuccess) {
      items[index] = { success: true, data: payload };
    } else {
      const error = typeof item.error === 'string' ? item.error : MISSING_ERROR_TEXT;
      items[index] =
        payload === undefined
          ? { success: false, error }
          : { success: false, error, data: payload };
    }
  }
  return { kind: 'items', items };
}

/**
 * Reads an async endpoint answer (spec: Async response): `success` true with a `request_id`
 * string (a number is accepted and converted), or `success` false as a rejection
 * (`accessDenied` when `error` is `Access denied`).
 *
 * @throws FerryError code `transport` (retryable) when the body is not JSON or not an object,
 *   `success` is missing, or an accepted answer has no `request_id`.
 */
export function readAsyncResponse(body: string): AsyncResponse {
  const envelope = parseObject(body, 'async endpoint');
  const success = readSuccess(envelope.success);
  if (success === undefined) throw transportError('async endpoint answer has no boolean success');
  if (!success) return rejection(envelope);
  const requestId = envelope.request_id;
  if (typeof requestId === 'string' && requestId !== '') {
    return { kind: 'accepted', requestId };
  }
  if (typeof requestId === 'number' && Number.isFinite(requestId)) {
    return { kind: 'accepted', requestId: String(requestId) };
  }
  throw transportError('async endpoint answer has no request_id');
}

/**
 * Reads a send result (spec: Send result payload) from a successful item's `data`, or
 * `undefined` when it does not have that shape (`msg_id` a string or number, `parts` a number).
 */
export function readSendResult(
  data: unknown,
): { readonly msgId: string; readonly parts: number | undefined } | undefined {
  if (!isObject(data)) return undefined;
  const msgId = data.msg_id;
  if (typeof msgId !== 'string' && typeof msgId !== 'number') return undefined;
  const parts = typeof data.parts === 'number' ? data.parts : undefined;
  return { msgId: String(msgId), parts };
}
