/**
 * The result record and the dead letter of one command, each within the record cap
 * (FERRY_RECORD_MAX_BYTES): a record the broker refuses would fail the partition's
 * transaction on every retry, and the partition would never move again. The key and the
 * headers get a bounded share of the cap and the value the rest; whatever had to be cut
 * is marked so, never dropped silently.
 */

import type { InboundRecord, OutboundRecord } from '../kafka/kafka-port.ts';
import {
  propagatedHeaders,
  withoutInvalidTraceContext,
} from '../observability/propagated-headers.ts';
import { EXPIRES_AT_HEADER } from './command-deadline.ts';
import type { ErrorCode, Result } from './result.ts';
import { encodeResult } from './result-encoding.ts';
import type { Delivery } from './send-outcome.ts';
import { previewOf } from './value-preview.ts';

/**
 * FERRY_RECORD_MAX_BYTES default: below the broker's default `max.message.bytes`
 * (1048588), leaving room for the record batch's own overhead.
 */
export const DEFAULT_RECORD_MAX_BYTES = 1_000_000;

/** The dead-letter header holding the same `code` as the command's result. */
export const ERROR_CODE_HEADER = 'ferry-error-code';

/** Characters of the `ferry-error` header of a dead letter, at most. */
const ERROR_HEADER_CHARS = 1000;

/** Room kept for the `ferry-truncated` and `ferry-original-bytes` headers. */
const MARKER_HEADER_BYTES = 64;

/** A key longer than this share of the cap is cut, so the value keeps most of the room. */
function keyBudget(maxBytes: number): number {
  return Math.floor(maxBytes / 4);
}

function boundedKey(key: Buffer | null, maxBytes: number): { key: Buffer | null; cut: boolean } {
  const budget = keyBudget(maxBytes);
  if (key === null || key.length <= budget) return { key, cut: false };
  return { key: key.subarray(0, budget), cut: true };
}

/**
 * The result record of a command, keyed like the command, with the command's allow-listed
 * trace and correlation headers (`propagate`, lower-case names); never over `maxBytes`.
 */
export function resultRecord(
  topic: string,
  record: InboundRecord,
  result: Result,
  maxBytes: number,
  propagate: readonly string[] = [],
): OutboundRecord {
  const { key, cut } = boundedKey(record.key, maxBytes);
  let headers = propagatedHeaders(record.headers, propagate);
  // Bounded per value, but a cap set very low must still leave the value its room.
  if (headerBytes(headers) > keyBudget(maxBytes)) headers = {};
  const valueBudget = maxBytes - (key?.length ?? 0) - headerBytes(headers);
  const value = encodeResult(cut ? { ...result, truncated: true } : result, valueBudget);
  return Object.keys(headers).length === 0 ? { topic, key, value } : { topic, key, value, headers };
}

function headerBytes(headers: Readonly<Record<string, string>>): number {
  let bytes = 0;
  for (const [name, value] of Object.entries(headers)) {
    bytes += Buffer.byteLength(name, 'utf8') + Buffer.byteLength(value, 'utf8');
  }
  return bytes;
}

/**
 * The dead letter of a command record: its key, value and headers plus `ferry-error`, the
 * result's `code` as `ferry-error-code`, and the source topic, partition and offset. When it would exceed `maxBytes` (key + value +
 * headers), the value is cut to what fits (an overlong key, or source headers taking more
 * than a quarter of the cap, are cut or dropped too) and headers `ferry-truncated: true`
 * and `ferry-original-bytes: <value bytes>` say so; the whole record stays in the commands
 * topic at the source offset.
 */
export function deadLetterRecord(
  topic: string,
  record: InboundRecord,
  error: string,
  maxBytes: number,
  delivery: Delivery,
  code?: ErrorCode,
  expiresAt?: string,
): OutboundRecord {
  const ferryHeaders: Record<string, string> = {
    // A deadline a default gave the command travels with it: a replay must not send it
    // later than the original could have gone. One from the command's header is kept
    // with its other headers.
    ...(expiresAt === undefined || record.headers[EXPIRES_AT_HEADER] !== undefined
      ? {}
      : { [EXPIRES_AT_HEADER]: expiresAt }),
    'ferry-error': error.length > ERROR_HEADER_CHARS ? previewOf(error, ERROR_HEADER_CHARS) : error,
    ...(code === undefined ? {} : { [ERROR_CODE_HEADER]: code }),
    'ferry-delivery': delivery,
    'ferry-source-topic': record.topic,
    'ferry-source-partition': String(record.partition),
    'ferry-source-offset': record.offset,
  };
  // Every header of the command stays (a replay sends it again with them), except trace
  // context that is not valid W3C syntax.
  let headers: Record<string, string> = {
    ...withoutInvalidTraceContext(record.headers),
    ...ferryHeaders,
  };
  let truncated = false;
  let bytes = headerBytes(headers);
  if (bytes > keyBudget(maxBytes)) {
    headers = ferryHeaders;
    bytes = headerBytes(headers);
    truncated = true;
  }
  const { key, cut } = boundedKey(record.key, maxBytes);
  truncated ||= cut;
  const room = maxBytes - (key?.length ?? 0) - bytes - MARKER_HEADER_BYTES;
  let value = record.value;
  if (value !== null && value.length > room) {
    value = value.subarray(0, Math.max(0, room));
    truncated = true;
  }
  if (truncated) {
    headers['ferry-truncated'] = 'true';
    headers['ferry-original-bytes'] = String(record.value?.length ?? 0);
  }
  return { topic, key, value, headers };
}
