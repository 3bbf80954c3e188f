/**
 * What a batch writes besides its offset: one result record per command and the dead letters,
 * built so that no command can stop its partition. Encoding never throws (a value too deep
 * or odd for JSON.stringify becomes a preview), and no record grows past the cap
 * (FERRY_RECORD_MAX_BYTES): a record the broker refuses would fail the partition's
 * transaction on every retry, and the partition would never move again.
 */
import type { InboundRecord, OutboundRecord } from '../kafka/kafka-client.ts';
import {
  propagatedHeaders,
  withoutInvalidTraceContext,
} from '../observability/propagated-headers.ts';
import type { Command } from './command.ts';
import { type ErrorCode, INTERNAL_RULE, internalErrorResult, type Result } from './result.ts';
import type { Delivery } from './send-outcome.ts';
import { PREVIEW_CHARS, previewOf } from './value-preview.ts';

// Kept importable from here, where records are built and previews were first needed.
export { PREVIEW_CHARS, previewJson, previewOf } from './value-preview.ts';

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

/** The result fields that can be large (they echo the command or the gateway), largest risk first. */
const CUTTABLE_FIELDS = ['data', 'error', 'id', 'type', 'msg_id', 'request_id', 'parts'] as const;

/** JSON.stringify, or undefined when it throws (too deep, a cycle, a BigInt). */
function tryStringify(value: unknown): string | undefined {
  try {
    return JSON.stringify(value);
  } catch {
    return undefined;
  }
}

/** Whether text takes at most `maxBytes` bytes of UTF-8; counted only when it matters. */
function fits(text: string, maxBytes: number): boolean {
  // A UTF-16 unit takes 1 to 3 bytes of UTF-8.
  if (text.length * 3 <= maxBytes) return true;
  if (text.length > maxBytes) return false;
  return Buffer.byteLength(text, 'utf8') <= maxBytes;
}

/**
 * A result as the value of its record, at most `maxBytes` bytes of UTF-8. Never throws.
 * When the whole result cannot be encoded or is too large, each large field (or one that
 * JSON cannot encode) is replaced by its preview and `truncated: true` is set; the result
 * keeps `success`, `stage`, `transport`, `attempts` and `completed_at` whatever happens.
 */
export function encodeResult(result: Result, maxBytes: number): string {
  const whole = tryStringify(result);
  if (whole !== undefined && fits(whole, maxBytes)) return whole;
  const cut: Result = { ...result, truncated: true };
  const fields = cut as unknown as Record<string, unknown>;
  for (const field of CUTTABLE_FIELDS) {
    const value = fields[field];
    if (value === undefined) continue;
    const encoded = tryStringify(value);
    if (encoded === undefined || encoded.length > PREVIEW_CHARS) fields[field] = previewOf(value);
  }
  const reduced = tryStringify(cut);
  if (reduced !== undefined && fits(reduced, maxBytes)) return reduced;
  // Only when the cap is smaller than a handful of previews: the fields that are always small.
  return JSON.stringify({
    success: result.success === true,
    error: 'the result did not fit FERRY_RECORD_MAX_BYTES',
    ...(result.code === undefined ? {} : { code: String(result.code) }),
    stage: String(result.stage),
    transport: String(result.transport),
    attempts: Number(result.attempts) || 0,
    completed_at: String(result.completed_at),
    truncated: true,
  });
}

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
): OutboundRecord {
  const ferryHeaders: Record<string, string> = {
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

/** Why a command's record also goes to the dead-letter topic, or undefined when it does not. */
export function deadLetterReason(command: Command, result: Result): string | undefined {
  if (command.kind === 'invalid') return command.unreadable ? command.rule : undefined;
  return result.stage === 'transport' ? 'transport' : undefined;
}

export interface OutputTopics {
  readonly results: string;
  readonly dlq: string;
}

export interface OutputRecords {
  readonly records: OutboundRecord[];
  /** One per command, in order. */
  readonly results: Result[];
  readonly deadLetterReasons: string[];
}

/**
 * The result record and dead letter of a record ferry failed on. Should even these fail
 * (the record itself is odd beyond what the builders expect), the records carry nothing of
 * it but its place: the source topic, partition and offset.
 */
function internalRecords(
  topics: OutputTopics,
  record: InboundRecord,
  result: Result,
  maxBytes: number,
  propagate: readonly string[],
): OutboundRecord[] {
  const error = result.error ?? 'internal error';
  try {
    return [
      resultRecord(topics.results, record, result, maxBytes, propagate),
      // Built after the command's trip, whatever it was: whether it was sent is unknown.
      deadLetterRecord(topics.dlq, record, error, maxBytes, 'in_doubt', 'internal'),
    ];
  } catch {
    const source = {
      'ferry-error': error,
      [ERROR_CODE_HEADER]: 'internal',
      'ferry-delivery': 'in_doubt',
      'ferry-source-topic': String(record.topic),
      'ferry-source-partition': String(record.partition),
      'ferry-source-offset': String(record.offset),
      'ferry-truncated': 'true',
    };
    return [
      { topic: topics.results, key: null, value: JSON.stringify({ ...result, truncated: true }) },
      { topic: topics.dlq, key: null, value: null, headers: source },
    ];
  }
}

/** Short text of anything thrown, for a result and a log line. */
export function errorText(error: unknown): string {
  try {
    const text = error instanceof Error ? error.message : String(error);
    return text.length > 500 ? `${text.slice(0, 500)}…` : text;
  } catch {
    return 'unknown error';
  }
}

/**
 * The result and dead-letter records of a batch's commands, in their order. A command whose
 * output cannot be built (a bug: `resultOf` or encoding threw) still gets exactly one
 * result, `internal error: …`, and a dead letter with reason `internal`; `onInternalError`
 * hears of it. Never throws.
 */
export function buildOutputRecords(
  commands: readonly Command[],
  resultOf: (command: Command, index: number) => Result,
  options: {
    readonly topics: OutputTopics;
    readonly maxBytes: number;
    readonly onInternalError: (command: Command, error: unknown) => void;
    /** Lower-case command header names copied to each result (FERRY_PROPAGATE_HEADERS). */
    readonly propagateHeaders?: readonly string[];
    /** Results go to this partition (modulo the topic's count); else their key's hash picks. */
    readonly resultPartition?: number | undefined;
  },
): OutputRecords {
  const { topics, maxBytes } = options;
  const propagate = options.propagateHeaders ?? [];
  const records: OutboundRecord[] = [];
  const results: Result[] = [];
  const deadLetterReasons: string[] = [];
  commands.forEach((command, index) => {
    let result: Result;
    let own: OutboundRecord[];
    let reason: string | undefined;
    try {
      result = resultOf(command, index);
      own = [resultRecord(topics.results, command.record, result, maxBytes, propagate)];
      reason = deadLetterReason(command, result);
      if (reason !== undefined) {
        own.push(
          deadLetterRecord(
            topics.dlq,
            command.record,
            result.error ?? reason,
            maxBytes,
            // An unreadable record was never sent.
            result.delivery ?? 'unsent',
            result.code,
          ),
        );
      }
    } catch (error: unknown) {
      try {
        options.onInternalError(command, error);
      } catch {
        // Reporting must not take the record's output with it.
      }
      result = internalErrorResult(command.transport, errorText(error));
      reason = INTERNAL_RULE;
      own = internalRecords(topics, command.record, result, maxBytes, propagate);
    }
    const partition = options.resultPartition;
    for (const record of own) {
      records.push(
        partition !== undefined && record.topic === topics.results
          ? { ...record, partition }
          : record,
      );
    }
    results.push(result);
    if (reason !== undefined) deadLetterReasons.push(reason);
  });
  return { records, results, deadLetterReasons };
}
