/**
 * How a normalised status callback becomes a `ferry.status` record (README, Topics and
 * records: Status event; docs/callbacks.md): its key, its value, and the identity used to
 * recognise a repeated callback.
 */
import { hash } from 'node:crypto';

/** The callback field a status event is keyed by, in order of preference. */
export const keyFields = ['id', 'msg_id', 'request_id'] as const;
export type KeyField = (typeof keyFields)[number];

export interface StatusEventKey {
  readonly field: KeyField;
  /** The record key: `String(value)` of that field. */
  readonly key: string;
}

/**
 * The record key of a callback: `String(id)`, else `String(msg_id)`, else `String(request_id)`
 * (a `REJECTED` callback of a refused async request may carry only `request_id`, spec: Errors).
 * A field counts when it is a non-empty string or a finite number. Undefined when none does:
 * such an event could not be matched to any command, so the receiver keeps it raw instead.
 */
export function statusEventKey(
  callback: Readonly<Record<string, unknown>>,
): StatusEventKey | undefined {
  for (const field of keyFields) {
    const value = callback[field];
    if (
      (typeof value === 'string' && value !== '') ||
      (typeof value === 'number' && Number.isFinite(value))
    ) {
      return { field, key: String(value) };
    }
  }
  return undefined;
}

/**
 * JSON text of a value with the keys of every object sorted: equal data, equal text, whatever
 * order the caller wrote its fields in. Recursion is safe here: bodies are depth-checked
 * before they are parsed (callback-body.ts).
 */
export function canonicalJson(value: unknown): string {
  // Loops and string appends rather than filter/map/join: this runs for every receipt.
  if (typeof value !== 'object' || value === null) return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) {
    let text = '[';
    for (let i = 0; i < value.length; i++) {
      if (i > 0) text += ',';
      text += canonicalJson(value[i]);
    }
    return `${text}]`;
  }
  const object = value as Record<string, unknown>;
  const names = Object.keys(object).sort();
  let text = '{';
  let first = true;
  for (const name of names) {
    const field = object[name];
    if (field === undefined) continue;
    if (!first) text += ',';
    first = false;
    text += `${JSON.stringify(name)}:${canonicalJson(field)}`;
  }
  return `${text}}`;
}

/**
 * The identity of a receipt for de-duplication: a SHA-256 of the WHOLE normalised callback
 * (ids, status, time, request_id, replies, every other field; not `received_at`, which is
 * ferry's). An identical retry has the same identity; two receipts that differ in anything,
 * such as two messages of one async `request_id`, or a second reply, do not.
 */
export function callbackFingerprint(event: Readonly<Record<string, unknown>>): string {
  const { received_at: _ours, ...theirs } = event;
  return `event:${hash('sha256', canonicalJson(theirs), 'hex')}`;
}

/**
 * The record value: every field of the normalised callback, in the caller's order, unknown
 * fields included, plus `received_at` (ISO 8601 UTC, this service's clock). A `received_at` the
 * caller sent is overwritten: the field is ferry's.
 */
export function encodeStatusEvent(
  callback: Readonly<Record<string, unknown>>,
  receivedAt: Date,
): string {
  return JSON.stringify({ ...callback, received_at: receivedAt.toISOString() });
}
