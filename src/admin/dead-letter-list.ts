/**
 * Listing dead letters for an operator: a read of the dead-letter topic through the
 * same DeadLetterLog port replay uses, that changes nothing. It neither takes the
 * replay over (a replay in progress elsewhere goes on) nor moves its progress; it
 * reads the progress only to tell which dead letters a replay already re-produced.
 */
import {
  type DeadLetter,
  type DeadLetterSelection,
  matchesSelection,
} from './dead-letter-filter.ts';
import type { DeadLetterLog, PartitionProgress, ScanVerdict } from './dead-letter-replay.ts';
import { OffsetRanges } from './replay-progress.ts';

export interface ListRequest extends DeadLetterSelection {
  /** Most dead letters to answer. */
  readonly limit: number;
  readonly signal?: AbortSignal;
}

export interface ListedDeadLetter {
  readonly record: DeadLetter;
  /** A replay already re-produced it to the commands topic. */
  readonly replayed: boolean;
}

export interface DeadLetterListing {
  /** The matching dead letters, oldest first within each partition. */
  readonly deadLetters: readonly ListedDeadLetter[];
  /** Looked at, matching or not. */
  readonly scanned: number;
  /** The limit stopped the scan before the end of the topic. */
  readonly limitReached: boolean;
}

/** Whether replay's committed progress of a partition covers `offset`. */
function replayedBefore(progress: PartitionProgress | undefined, offset: number): boolean {
  if (!progress) return false;
  if (offset < progress.offset) return true;
  try {
    return OffsetRanges.parse(progress.metadata).has(offset);
  } catch {
    // Unreadable progress: replay refuses to run on it; a listing just cannot tell.
    return false;
  }
}

/**
 * The dead letters that match `request`, from the start of every partition up to the
 * end offsets read at the start of the call.
 * @throws FerryError `kafka`; `aborted` when the signal fired.
 */
export async function listDeadLetters(
  log: DeadLetterLog,
  request: ListRequest,
): Promise<DeadLetterListing> {
  const [ends, committed] = await Promise.all([log.endOffsets(), log.progress()]);
  const from = new Map([...ends.keys()].map((partition) => [partition, 0]));
  const found: ListedDeadLetter[] = [];
  let scanned = 0;
  let limitReached = false;
  const visit = (record: DeadLetter): ScanVerdict => {
    if (found.length >= request.limit) {
      limitReached = true;
      return 'stop';
    }
    scanned++;
    if (matchesSelection(record, request)) {
      found.push({
        record,
        replayed: replayedBefore(committed.get(record.partition), record.offset),
      });
    }
    return 'continue';
  };
  await log.scan(from, ends, visit, request.signal);
  return { deadLetters: found, scanned, limitReached };
}
