/**
 * Reading `Retry-After` (RFC 9110, 10.2.3): how long a gateway that answered 429 (too
 * many requests) or 503 (unavailable) asks its clients to wait. Either whole seconds or
 * an HTTP-date; anything else is no answer at all, so ferry keeps its own backoff.
 */

/** The statuses whose `Retry-After` ferry honours: the ones RFC 9110 and 6585 give it to. */
export const RETRY_AFTER_STATUSES: ReadonlySet<number> = new Set([429, 503]);

/**
 * The wait a `Retry-After` value asks for, in milliseconds from `nowMs` (0 for a date in
 * the past); undefined when there is no value or it is neither form. Several values (a
 * repeated header) count by the first.
 */
export function parseRetryAfter(
  value: string | readonly string[] | undefined,
  nowMs: number,
): number | undefined {
  const first = typeof value === 'string' ? value : value?.[0];
  if (first === undefined) return undefined;
  const text = first.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  const at = Date.parse(httpDateInUtc(text) ?? '');
  if (!Number.isFinite(at)) return undefined;
  return Math.max(0, at - nowMs);
}

/**
 * The text of an HTTP-date in a form Date.parse reads as UTC, or undefined when it is not
 * one: IMF-fixdate and RFC 850 dates name a weekday and GMT (requiring both keeps
 * Date.parse from reading a bare number or a stray word as some date); asctime dates
 * carry no zone, and are UTC by definition.
 */
function httpDateInUtc(text: string): string | undefined {
  if (/^[A-Za-z]{3,9}, .+ GMT$/.test(text)) return text;
  if (/^[A-Za-z]{3} [A-Za-z]{3} [ \d]\d \d\d:\d\d:\d\d \d{4}$/.test(text)) return `${text} GMT`;
  return undefined;
}
