/**
 * Dead-letter replay (README, Topics and records: Dead letter): re-produces dead letters to
 * the commands topic once their cause is gone, with a limit and a filter, each
 * at most once. The Kafka side (reading a range, committing progress together
 * with the records) is the `DeadLetterLog` port, implemented in
 * src/kafka/dead-letter-reader.ts.
 */
import { FerryError } from '../errors.ts';
import {
  type DeadLetter,
  matchesFilter,
  originalHeaders,
  type ReplayFilter,
} from './dead-letter-filter.ts';
import { type DeadLetterListing, type ListRequest, listDeadLetters } from './dead-letter-list.ts';
import {
  MAX_PROGRESS_METADATA_CHARS,
  nextProgress,
  OffsetRanges,
  type PartitionProgress,
} from './replay-progress.ts';

export type { DeadLetter, DeadLetterPosition } from './dead-letter-filter.ts';
export { matchesFilter, originalHeaders } from './dead-letter-filter.ts';
export type { DeadLetterListing, ListedDeadLetter, ListRequest } from './dead-letter-list.ts';
export type { PartitionProgress } from './replay-progress.ts';

/** A record to produce to the commands topic. */
export interface ReplayRecord {
  readonly key: Buffer | null;
  readonly value: Buffer | null;
  readonly headers: Readonly<Record<string, string>>;
}

/** Whether the scan goes on after a record. */
export type ScanVerdict = 'continue' | 'stop';

/** The dead-letter topic as replay needs it. */
export interface DeadLetterLog {
  /**
   * Takes the replay over for the whole fleet: from here on, a replay that runs
   * anywhere else can no longer commit, so the progress read next cannot change under
   * this one. Called before the progress is read.
   * @throws FerryError `kafka`.
   */
  begin(): Promise<void>;
  /** The committed progress of the replay, by partition (absent: never replayed). */
  progress(): Promise<Map<number, PartitionProgress>>;
  /** The end offset (high watermark) of every partition of the dead-letter topic. */
  endOffsets(): Promise<Map<number, number>>;
  /**
   * Hands the records of each partition from `from` up to `to` (exclusive) to `visit`,
   * one at a time, in offset order per partition, until every partition reached `to`
   * or `visit` answered `stop` (that record counts as not looked at).
   * @returns per partition, the first offset not looked at.
   * @throws FerryError `kafka`; `aborted` when `signal` fired.
   */
  scan(
    from: ReadonlyMap<number, number>,
    to: ReadonlyMap<number, number>,
    visit: (record: DeadLetter) => ScanVerdict,
    signal?: AbortSignal,
  ): Promise<Map<number, number>>;
  /**
   * Produces `records` to the commands topic and commits `progress`, atomically:
   * both are visible or neither.
   * @throws FerryError `kafka`.
   */
  commit(
    records: readonly ReplayRecord[],
    progress: ReadonlyMap<number, PartitionProgress>,
  ): Promise<void>;
}

export interface ReplayRequest extends ReplayFilter {
  /** Most dead letters to replay in this call. */
  readonly limit: number;
  /**
   * Select and report (`wouldReplay`) without producing or committing anything, and without
   * taking the replay over from one in progress. Covers at most one chunk (REPLAY_CHUNK).
   */
  readonly dryRun?: boolean;
  readonly signal?: AbortSignal;
  /** Called with the running totals after each committed chunk (progress for the fleet). */
  readonly onChunk?: (totals: ReplayOutcome) => void;
}

export interface ReplayOutcome {
  /** Re-produced to the commands topic by this call. */
  readonly replayed: number;
  /** Looked at by this call, replayed or not. */
  readonly scanned: number;
  /** Looked at and left because they did not match the filter, are in doubt or were cut. */
  readonly skipped: number;
  /** Met again after an earlier call replayed them. */
  readonly alreadyReplayed: number;
  /** The scan stopped before the end of the topic (limit, or the progress record is full). */
  readonly limitReached: boolean;
  /** Dry run only: the dead letters a replay would re-produce, in scan order. */
  readonly wouldReplay?: readonly DeadLetter[];
}

/** What the admin API calls. */
export interface DeadLetterReplayer {
  /** @throws FerryError `illegal_state` while another replay runs; `kafka`; `aborted`. */
  replay(request: ReplayRequest): Promise<ReplayOutcome>;
  /** Reads dead letters and changes nothing. @throws FerryError `kafka`; `aborted`. */
  list(request: ListRequest): Promise<DeadLetterListing>;
}

/**
 * Dead letters replayed per transaction: each chunk commits its records with the
 * progress up to them, so a long replay neither builds one huge transaction nor
 * loses what it did when it stops.
 */
export const REPLAY_CHUNK = 1000;

/** What a dead letter becomes on the commands topic: the command as it was first produced. */
function replayRecord(record: DeadLetter): ReplayRecord {
  return { key: record.key, value: record.value, headers: originalHeaders(record.headers) };
}

interface PartitionRun {
  readonly start: number;
  readonly replayed: OffsetRanges;
  firstSkipped: number | undefined;
}

/**
 * Replays dead letters through a DeadLetterLog. One replay at a time per instance;
 * across replicas the log's transactional id fences a concurrent one.
 */
export class DeadLetterReplay implements DeadLetterReplayer {
  readonly #log: DeadLetterLog;
  #running = false;

  constructor(log: DeadLetterLog) {
    this.#log = log;
  }

  async replay(request: ReplayRequest): Promise<ReplayOutcome> {
    // A dry run commits nothing, so it neither takes the replay over nor waits for one.
    if (request.dryRun)
      return this.#run({ ...request, limit: Math.min(REPLAY_CHUNK, request.limit) });
    if (this.#running) {
      throw new FerryError('illegal_state', 'a dead-letter replay is already running', {
        retryable: true,
      });
    }
    this.#running = true;
    try {
      await this.#log.begin();
      const total = { replayed: 0, scanned: 0, skipped: 0, alreadyReplayed: 0 };
      let limitReached = false;
      while (true) {
        const limit = Math.min(REPLAY_CHUNK, request.limit - total.replayed);
        const chunk = await this.#run({ ...request, limit });
        total.replayed += chunk.replayed;
        total.scanned += chunk.scanned;
        total.skipped += chunk.skipped;
        total.alreadyReplayed += chunk.alreadyReplayed;
        limitReached = chunk.limitReached;
        request.onChunk?.({ ...total, limitReached });
        // The chunk ended the scan, or the request's limit is used up.
        if (!chunk.limitReached || chunk.replayed === 0 || total.replayed >= request.limit) break;
      }
      return { ...total, limitReached };
    } finally {
      this.#running = false;
    }
  }

  async #run(request: ReplayRequest): Promise<ReplayOutcome> {
    const [ends, committed] = await Promise.all([this.#log.endOffsets(), this.#log.progress()]);
    const runs = new Map<number, PartitionRun>();
    const from = new Map<number, number>();
    for (const [partition, end] of ends) {
      const saved = committed.get(partition);
      const start = saved && saved.offset >= 0 ? saved.offset : 0;
      let replayed: OffsetRanges;
      try {
        replayed = OffsetRanges.parse(saved?.metadata);
      } catch (error: unknown) {
        throw new FerryError(
          'illegal_state',
          `dead-letter replay progress of partition ${partition} is unreadable`,
          {
            cause: error,
            retryable: false,
          },
        );
      }
      runs.set(partition, { start, replayed, firstSkipped: undefined });
      from.set(partition, Math.min(start, end));
    }

    const records: DeadLetter[] = [];
    let scanned = 0;
    let skipped = 0;
    let alreadyReplayed = 0;
    let limitReached = false;
    const visit = (record: DeadLetter): ScanVerdict => {
      const run = runs.get(record.partition);
      if (!run) return 'continue';
      if (run.replayed.has(record.offset)) {
        scanned++;
        alreadyReplayed++;
        return 'continue';
      }
      if (records.length >= request.limit) {
        limitReached = true;
        return 'stop';
      }
      if (!matchesFilter(record, request)) {
        scanned++;
        skipped++;
        if (run.firstSkipped === undefined) run.firstSkipped = record.offset;
        return 'continue';
      }
      const grown = OffsetRanges.parse(run.replayed.format());
      grown.add(record.offset);
      if (grown.format().length > MAX_PROGRESS_METADATA_CHARS) {
        // Too many scattered replays to remember in one commit: stop here, the next call goes on.
        limitReached = true;
        return 'stop';
      }
      run.replayed.add(record.offset);
      scanned++;
      records.push(record);
      return 'continue';
    };
    const scannedTo = await this.#log.scan(from, ends, visit, request.signal);
    const counts = { scanned, skipped, alreadyReplayed, limitReached };
    if (request.dryRun) return { replayed: 0, ...counts, wouldReplay: records };

    const progress = new Map<number, PartitionProgress>();
    for (const [partition, run] of runs) {
      const reached = scannedTo.get(partition) ?? from.get(partition) ?? run.start;
      const before = committed.get(partition);
      const next = nextProgress(run.start, reached, run.firstSkipped, run.replayed);
      if (before?.offset !== next.offset || (before?.metadata ?? null) !== next.metadata) {
        progress.set(partition, next);
      }
    }
    if (records.length > 0 || progress.size > 0) {
      await this.#log.commit(records.map(replayRecord), progress);
    }
    return { replayed: records.length, ...counts };
  }

  list(request: ListRequest): Promise<DeadLetterListing> {
    return listDeadLetters(this.#log, request);
  }
}
