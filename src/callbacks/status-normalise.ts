/**
 * A decoded callback made into the one shape `ferry.status` carries (docs/callbacks.md, What
 * is understood): gateways write the same receipt in several dialects (`"id": 42` or
 * `"id": "42"`, `"success": 1`, `"updated"` without an offset) and a consumer should read
 * one. Every field is kept; the known ones are written the documented way; a field that
 * cannot be read as its kind makes the callback unmappable (it is then kept raw instead).
 */
import { validateStatusCallback } from '../contract/index.ts';
import { type StatusEventKey, statusEventKey } from './status-event.ts';

export type NormalisedCallback =
  | {
      readonly ok: true;
      /** The callback in the documented shape, unknown fields kept, in the caller's order. */
      readonly event: Record<string, unknown>;
      readonly key: StatusEventKey;
    }
  | { readonly ok: false; readonly reason: string };

/** Set on an event whose `updated` carried no UTC offset and was read as UTC. */
export const UPDATED_ASSUMED_UTC = 'updated_assumed_utc';
/** Set on a reply whose `datetime` carried no UTC offset and was read as UTC. */
export const DATETIME_ASSUMED_UTC = 'datetime_assumed_utc';

class Unreadable extends Error {}

const STRING_FIELDS = ['id', 'msg_id', 'request_id', 'type', 'status', 'error', 'reply'] as const;

// ISO 8601 / RFC 3339 date-time, offset optional: date, `T` or space, hh:mm[:ss[.fraction]].
const DATE_TIME =
  /^(\d{4}-\d{2}-\d{2})[Tt ](\d{2}:\d{2})(:\d{2}(?:[.,]\d+)?)?\s*([Zz]|[+-]\d{2}(?::?\d{2})?)?$/;

/**
 * A date-time as UTC ISO 8601 (`2024-05-01T08:00:00.000Z`), and whether its offset was
 * missing (then it is read as UTC: the gateway's examples are UTC, and a guess is marked).
 * Fractions past milliseconds are cut. @throws Unreadable when it is no date-time.
 */
export function normaliseDateTime(
  field: string,
  value: unknown,
): { readonly iso: string; readonly assumedUtc: boolean } {
  if (typeof value !== 'string') throw new Unreadable(`${field}: must be a date-time string`);
  const match = DATE_TIME.exec(value.trim());
  if (match === null) throw new Unreadable(`${field}: not an ISO 8601 date-time`);
  const [, date, hoursMinutes, seconds = ':00', offset] = match;
  const fraction = seconds.replace(',', '.');
  let zone = 'Z';
  if (offset !== undefined && offset.toUpperCase() !== 'Z') {
    const digits = offset.slice(1).replace(':', '');
    zone = `${offset[0]}${digits.slice(0, 2)}:${digits.slice(2, 4) || '00'}`;
  }
  const millis = Date.parse(`${date}T${hoursMinutes}${fraction.slice(0, 7)}${zone}`);
  if (Number.isNaN(millis)) throw new Unreadable(`${field}: not a valid date-time`);
  return { iso: new Date(millis).toISOString(), assumedUtc: offset === undefined };
}

/** `true`, `false`, `1`, `0`, and their string forms (any case, spaces trimmed). */
function readSuccess(value: unknown): boolean {
  if (value === true || value === 1) return true;
  if (value === false || value === 0) return false;
  if (typeof value === 'string') {
    const text = value.trim().toLowerCase();
    if (text === 'true' || text === '1') return true;
    if (text === 'false' || text === '0') return false;
  }
  throw new Unreadable('success: must be a boolean, 1/0 or "true"/"false"');
}

/** A string as is; a finite number as its decimal text. */
function readString(field: string, value: unknown): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  throw new Unreadable(`${field}: must be a string or a number`);
}

/** A finite number, or a string holding one. */
function readNumber(field: string, value: unknown): number {
  if (typeof value === 'number' && Number.isFinite(value)) return value;
  if (typeof value === 'string' && value.trim() !== '') {
    const number = Number(value);
    if (Number.isFinite(number)) return number;
  }
  throw new Unreadable(`${field}: must be a number`);
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function normaliseReply(value: unknown, path: string): Record<string, unknown> {
  if (!isObject(value)) throw new Unreadable(`${path}: must be an object`);
  const reply: Record<string, unknown> = { ...value };
  delete reply[DATETIME_ASSUMED_UTC];
  if (reply.datetime !== undefined && reply.datetime !== null) {
    const { iso, assumedUtc } = normaliseDateTime(`${path}.datetime`, reply.datetime);
    reply.datetime = iso;
    if (assumedUtc) reply[DATETIME_ASSUMED_UTC] = true;
  }
  if (reply.message !== undefined && reply.message !== null) {
    reply.message = readString(`${path}.message`, reply.message);
  }
  if (isObject(reply.media)) {
    const media: Record<string, unknown> = { ...reply.media };
    if (media.filesize !== undefined && media.filesize !== null) {
      media.filesize = readNumber(`${path}.media.filesize`, media.filesize);
    }
    reply.media = media;
  }
  return reply;
}

/**
 * The documented shape of a decoded callback, or why it cannot be one. `null` in a known
 * field means "not given" and the field is left out. The result must still pass the
 * contract's Events table (`validateStatusCallback`) and carry `id`, `msg_id` or
 * `request_id`. Never throws.
 */
export function normaliseCallback(value: Readonly<Record<string, unknown>>): NormalisedCallback {
  try {
    const event: Record<string, unknown> = { ...value };
    delete event[UPDATED_ASSUMED_UTC];
    if (event.success === undefined || event.success === null) {
      return { ok: false, reason: 'success: is required' };
    }
    event.success = readSuccess(event.success);
    for (const field of STRING_FIELDS) {
      if (event[field] === null) delete event[field];
      else if (event[field] !== undefined) event[field] = readString(field, event[field]);
    }
    if (event.updated === null) delete event.updated;
    else if (event.updated !== undefined) {
      const { iso, assumedUtc } = normaliseDateTime('updated', event.updated);
      event.updated = iso;
      if (assumedUtc) event[UPDATED_ASSUMED_UTC] = true;
    }
    if (event.duration === null) delete event.duration;
    else if (event.duration !== undefined) event.duration = readNumber('duration', event.duration);
    if (event.replies === null) delete event.replies;
    else if (event.replies !== undefined) {
      if (!Array.isArray(event.replies)) return { ok: false, reason: 'replies: must be an array' };
      event.replies = event.replies.map((reply, index) =>
        normaliseReply(reply, `replies.${index}`),
      );
    }
    const checked = validateStatusCallback(event);
    if (!checked.ok) return { ok: false, reason: checked.message };
    const key = statusEventKey(event);
    if (key === undefined) return { ok: false, reason: 'none of id, msg_id, request_id' };
    return { ok: true, event, key };
  } catch (error: unknown) {
    if (error instanceof Unreadable) return { ok: false, reason: error.message };
    throw error;
  }
}
