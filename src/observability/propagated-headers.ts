/**
 * Trace and correlation context carried from a command record to the records it leads to
 * (its result, its dead letter, the status events of its message), so a trace or a
 * correlation id followed from the producer does not stop at ferry (README, Topics and
 * records: Trace and correlation headers). Which headers travel is an allow-list
 * (FERRY_PROPAGATE_HEADERS); `traceparent` must be valid W3C Trace Context to travel at all.
 */

/** FERRY_PROPAGATE_HEADERS default: W3C Trace Context and the common correlation header. */
export const DEFAULT_PROPAGATE_HEADERS: readonly string[] = [
  'traceparent',
  'tracestate',
  'correlation-id',
];

export const TRACEPARENT = 'traceparent';
export const TRACESTATE = 'tracestate';

/**
 * Longest header value carried, characters. W3C caps `tracestate` at 512; a correlation id
 * longer than this is not an id. A longer value is left behind, not cut: a cut id would
 * point at nothing, or at something else.
 */
export const MAX_PROPAGATED_VALUE_CHARS = 1024;

// W3C Trace Context §3.2: version-traceid-parentid-flags, lower-case hex. Version ff is
// invalid; a trace id or parent id of all zeros is invalid. Future versions may append
// fields after the flags (`-…`), which a version-00 reader must accept.
const TRACEPARENT_PATTERN = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/;

/** Whether a `traceparent` value is valid W3C Trace Context (version 00 rules, later versions read as 00 allows). */
export function isValidTraceparent(value: string): boolean {
  const match = TRACEPARENT_PATTERN.exec(value);
  if (match === null) return false;
  const [, version, traceId, parentId, , rest] = match;
  if (version === 'ff') return false;
  if (version === '00' && rest !== undefined) return false;
  if (/^0+$/.test(traceId ?? '') || /^0+$/.test(parentId ?? '')) return false;
  return true;
}

/** Header names an allow-list names: lower-case (Kafka header names are case-sensitive, HTTP's are not). */
export function normaliseHeaderNames(names: readonly string[]): readonly string[] {
  return [...new Set(names.map((name) => name.trim().toLowerCase()).filter((n) => n !== ''))];
}

/**
 * The allow-listed headers of `headers`, under their lower-case names: `allow` must already
 * be lower-case (normaliseHeaderNames). A `traceparent` that is not valid W3C syntax is left
 * out, and with it `tracestate` (which means nothing without its parent, W3C §3.3). Values
 * longer than MAX_PROPAGATED_VALUE_CHARS, or empty, are left out. Never throws.
 */
export function propagatedHeaders(
  headers: Readonly<Record<string, string>> | Iterable<[string, string]>,
  allow: readonly string[],
): Record<string, string> {
  const out: Record<string, string> = {};
  if (allow.length === 0) return out;
  const entries = Symbol.iterator in headers ? headers : Object.entries(headers);
  for (const [name, value] of entries as Iterable<[string, string]>) {
    const lower = name.toLowerCase();
    if (!allow.includes(lower) || Object.hasOwn(out, lower)) continue;
    if (typeof value !== 'string' || value === '' || value.length > MAX_PROPAGATED_VALUE_CHARS) {
      continue;
    }
    out[lower] = value;
  }
  const traceparent = out[TRACEPARENT];
  if (traceparent !== undefined && !isValidTraceparent(traceparent)) delete out[TRACEPARENT];
  if (out[TRACEPARENT] === undefined && allow.includes(TRACEPARENT)) delete out[TRACESTATE];
  return out;
}

/**
 * The command's headers with an invalid `traceparent` (and its `tracestate`) removed, the
 * rest untouched: a dead letter keeps every header of its command for replay, but must not
 * hand on trace context that tracing tools would refuse or misread.
 */
export function withoutInvalidTraceContext(
  headers: Readonly<Record<string, string>>,
): Readonly<Record<string, string>> {
  const names = Object.keys(headers);
  const parentName = names.find((name) => name.toLowerCase() === TRACEPARENT);
  const parent = parentName === undefined ? undefined : headers[parentName];
  if (parent !== undefined && isValidTraceparent(parent)) return headers;
  const stateName = names.find((name) => name.toLowerCase() === TRACESTATE);
  if (parentName === undefined && stateName === undefined) return headers;
  const kept: Record<string, string> = {};
  for (const name of names) {
    if (name !== parentName && name !== stateName) kept[name] = headers[name] as string;
  }
  return kept;
}

/** The query of a request's URL; undefined when there is no URL or it cannot be read. Never throws. */
export function requestQuery(requestUrl: string | undefined): URLSearchParams | undefined {
  if (requestUrl === undefined) return undefined;
  try {
    return new URL(requestUrl, 'http://ferry').searchParams;
  } catch {
    return undefined;
  }
}

/**
 * The allow-listed headers a callback URL carried back in its query (`?traceparent=…`,
 * put there by hook injection), checked like command headers.
 */
export function carriedInQuery(
  query: URLSearchParams | undefined,
  allow: readonly string[],
): Record<string, string> {
  if (allow.length === 0 || query === undefined) return {};
  return propagatedHeaders(query, allow);
}
