/**
 * Which dead letters an operator's request picks: the filters shared by listing and
 * replaying (error text, command type, time range, delivery verdict, positions), and
 * the headers dead-lettering adds to a command (README, Topics and records: Dead letter).
 */

/** One record of the dead-letter topic. */
export interface DeadLetter {
  readonly partition: number;
  readonly offset: number;
  /** The record timestamp, ms since the epoch: when the dead letter was written. */
  readonly timestamp: number;
  readonly key: Buffer | null;
  readonly value: Buffer | null;
  readonly headers: Readonly<Record<string, string>>;
}

/** A dead letter's place in the topic. */
export interface DeadLetterPosition {
  readonly partition: number;
  readonly offset: number;
}

/** What a request selects; every field set must match. */
export interface DeadLetterSelection {
  /** Only dead letters whose `ferry-error` header contains this text, case-insensitive. */
  readonly errorContains?: string;
  /** Only dead letters whose command `type` is exactly this. */
  readonly type?: string;
  /** Only dead letters written at or after this time (ms since the epoch). */
  readonly sinceMs?: number;
  /** Only dead letters written before this time (ms since the epoch). */
  readonly untilMs?: number;
  /** true: only in-doubt dead letters; false: only the others; unset: both. */
  readonly inDoubt?: boolean;
  /** Only these dead letters; absent or empty: no position filter. */
  readonly positions?: readonly DeadLetterPosition[];
}

export const ERROR_HEADER = 'ferry-error';
export const DELIVERY_HEADER = 'ferry-delivery';
export const TRUNCATED_HEADER = 'ferry-truncated';

/** The headers ferry adds when it dead-letters a record; every other header is the command's. */
const deadLetterHeaders: ReadonlySet<string> = new Set([
  ERROR_HEADER,
  'ferry-error-code',
  DELIVERY_HEADER,
  TRUNCATED_HEADER,
  'ferry-original-bytes',
  'ferry-source-topic',
  'ferry-source-partition',
  'ferry-source-offset',
]);

/** The command's own headers (`ferry-transport` among them), without those dead-lettering added. */
export function originalHeaders(headers: Readonly<Record<string, string>>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(headers).filter(([name]) => !deadLetterHeaders.has(name.toLowerCase())),
  );
}

/** The command's `type`, or undefined when the value is not a JSON object with a string one. */
export function commandType(value: Buffer | null): string | undefined {
  if (value === null) return undefined;
  try {
    const parsed: unknown = JSON.parse(value.toString('utf8'));
    if (typeof parsed === 'object' && parsed !== null && 'type' in parsed) {
      return typeof parsed.type === 'string' ? parsed.type : undefined;
    }
  } catch {
    // Not JSON (a command that could not be parsed): it has no type to match.
  }
  return undefined;
}

export function isInDoubt(record: DeadLetter): boolean {
  return record.headers[DELIVERY_HEADER] === 'in_doubt';
}

export function isTruncated(record: DeadLetter): boolean {
  return record.headers[TRUNCATED_HEADER] === 'true';
}

/** Whether a dead letter is what the selection asks for (replayable or not). */
export function matchesSelection(record: DeadLetter, selection: DeadLetterSelection): boolean {
  if (selection.inDoubt !== undefined && isInDoubt(record) !== selection.inDoubt) return false;
  if (selection.sinceMs !== undefined && record.timestamp < selection.sinceMs) return false;
  if (selection.untilMs !== undefined && record.timestamp >= selection.untilMs) return false;
  if (
    selection.positions !== undefined &&
    selection.positions.length > 0 &&
    !selection.positions.some((p) => p.partition === record.partition && p.offset === record.offset)
  ) {
    return false;
  }
  if (selection.errorContains !== undefined) {
    const error = record.headers[ERROR_HEADER];
    if (error === undefined) return false;
    if (!error.toLowerCase().includes(selection.errorContains.toLowerCase())) return false;
  }
  if (selection.type !== undefined && commandType(record.value) !== selection.type) return false;
  return true;
}

/** A replay's filter: a selection, and whether in-doubt dead letters may be sent again. */
export type ReplayFilter = Omit<DeadLetterSelection, 'inDoubt'> & {
  /**
   * Also dead letters marked `ferry-delivery: in_doubt` (the gateway may have the command
   * already: replaying it may send it twice). Default false: only proven-unsent ones.
   */
  readonly includeInDoubt?: boolean;
};

/** Whether a replay re-produces this dead letter. */
export function matchesFilter(record: DeadLetter, filter: ReplayFilter): boolean {
  // A cut value is not the command: the original stays at the source offset.
  if (isTruncated(record)) return false;
  if (isInDoubt(record) && !filter.includeInDoubt) return false;
  return matchesSelection(record, filter);
}
