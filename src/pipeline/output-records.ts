/**
 * What a batch writes besides its offset: one result record per command and the dead letters,
 * in the commands' order, built so that no command can stop its partition. Each record is
 * built within the record cap (bounded-records.ts); should building one throw all the same
 * (a bug), the command still gets exactly one result, an internal error, and a dead letter.
 */
import type { InboundRecord, OutboundRecord } from '../kafka/kafka-port.ts';
import { deadLetterRecord, ERROR_CODE_HEADER, resultRecord } from './bounded-records.ts';
import type { Command } from './command.ts';
import { INTERNAL_RULE, internalErrorResult, type Result } from './result.ts';

// Kept importable from here, where records were first built and previews first needed.
export {
  DEFAULT_RECORD_MAX_BYTES,
  deadLetterRecord,
  ERROR_CODE_HEADER,
  resultRecord,
} from './bounded-records.ts';
export { encodeResult } from './result-encoding.ts';
export { PREVIEW_CHARS, previewJson, previewOf } from './value-preview.ts';

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
            result.expires_at,
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
