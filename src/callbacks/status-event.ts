/**
 * How a validated status callback becomes a `ferry.status` record (README, Topics and
 * records: Status event; docs/callbacks.md): its key, its value, and the identity used to recognise a repeated callback.
 */

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
 * such an event could not be matched to any command, so the receiver refuses it (400).
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
 * The identity of a callback for de-duplication: the key field and value, `status` and
 * `updated`: a callback with the same id, status and updated is the same callback sent again. A missing `status` or `updated` is part
 * of the identity as "absent", distinct from any string.
 */
export function callbackFingerprint(
  key: StatusEventKey,
  callback: Readonly<Record<string, unknown>>,
): string {
  return JSON.stringify([key.field, key.key, callback.status ?? null, callback.updated ?? null]);
}

/**
 * The record value: every field of the callback as received, in its order, unknown fields
 * included, plus `received_at` (ISO 8601 UTC, this service's clock). A `received_at` the
 * caller sent is overwritten: the field is ferry's.
 */
export function encodeStatusEvent(
  callback: Readonly<Record<string, unknown>>,
  receivedAt: Date,
): string {
  return JSON.stringify({ ...callback, received_at: receivedAt.toISOString() });
}
