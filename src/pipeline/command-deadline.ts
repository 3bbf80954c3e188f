/**
 * A command's deadline: the moment after which it must never reach the gateway. A login
 * code sent twenty minutes late is charged, confuses a user who already asked for a new
 * one, and is worth less than none. The deadline comes from the record's
 * `ferry-expires-at` header (RFC 3339, with an offset or `Z`), or else from a default per
 * operation type (FERRY_EXPIRE_AFTER_MS), counted from the record's Kafka timestamp.
 */
import { messageOperationTypes, type OperationType } from '../contract/index.ts';

/** The header that sets a command's deadline. */
export const EXPIRES_AT_HEADER = 'ferry-expires-at';

/** RFC 3339 date-time: a full date, a time with seconds, an offset or Z; `T` or a space. */
export const RFC3339_PATTERN =
  '^\\d{4}-\\d{2}-\\d{2}[Tt ]\\d{2}:\\d{2}:\\d{2}(\\.\\d{1,9})?([Zz]|[+-]\\d{2}:\\d{2})$';
const RFC3339 = new RegExp(RFC3339_PATTERN);

/** Milliseconds since the epoch of an RFC 3339 date-time, or undefined when it is not one. */
export function parseRfc3339(text: string): number | undefined {
  const trimmed = text.trim();
  if (!RFC3339.test(trimmed)) return undefined;
  const [date = '', time = ''] = [trimmed.slice(0, 10), trimmed.slice(11)];
  const [year, month, day] = date.split('-').map(Number) as [number, number, number];
  const [hour, minute, second] = time.slice(0, 8).split(':').map(Number) as [
    number,
    number,
    number,
  ];
  // Date.parse rolls 2026-02-30 over to March; a deadline nobody meant is refused instead.
  const daysInMonth = new Date(Date.UTC(year, month, 0)).getUTCDate();
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth) return undefined;
  if (hour > 23 || minute > 59 || second > 60) return undefined;
  const ms = Date.parse(`${date}T${time.toUpperCase()}`);
  return Number.isFinite(ms) ? ms : undefined;
}

/** Where a command's deadline came from. */
export type DeadlineSource = 'header' | 'default';

export interface Deadline {
  readonly atMs: number;
  readonly source: DeadlineSource;
}

/**
 * The deadline of a command record: its header's, else its type's default counted from
 * the record's timestamp, else none.
 * @returns an error text when the header is there but is not an RFC 3339 date-time.
 */
export function deadlineOf(
  headers: Readonly<Record<string, string>>,
  timestamp: string,
  type: OperationType,
  defaults: ReadonlyMap<string, number> | undefined,
): Deadline | undefined | { readonly error: string } {
  const header = headers[EXPIRES_AT_HEADER];
  if (header !== undefined) {
    const atMs = parseRfc3339(header);
    if (atMs === undefined) {
      return {
        error: `${EXPIRES_AT_HEADER}: must be an RFC 3339 date-time with an offset, e.g. 2026-11-27T12:03:10Z`,
      };
    }
    return { atMs, source: 'header' };
  }
  // `*` covers the message types only: a lookup or a template call has no default.
  const afterMs =
    defaults?.get(type) ?? (messageOperationTypes.has(type) ? defaults?.get('*') : undefined);
  if (afterMs === undefined) return undefined;
  const producedAt = Number(timestamp);
  // A record without a usable timestamp has no start for a default to count from.
  if (!Number.isFinite(producedAt) || producedAt <= 0) return undefined;
  return { atMs: producedAt + afterMs, source: 'default' };
}

/** Whether a deadline has passed at `nowMs`. */
export function isPast(deadlineMs: number | undefined, nowMs: number): boolean {
  return deadlineMs !== undefined && nowMs >= deadlineMs;
}
