/**
 * Dead-letter replay (README, Topics and records: Dead letter): re-produces dead letters to
 * the commands topic once their cause is gone, with a limit and a filter, each
 * at most once. The Kafka side (reading a range, committing progress together
 * with the records) is the `DeadLetterLog` port, implemented in
 * src/kafka/dead-letter-reader.ts.
 */
import { FerryError } from '../errors.ts';
import {
  MAX_PROGRESS_METADATA_CHARS,
  nextProgress,
  OffsetRanges,
  type PartitionProgress,
} from './replay-progress.ts';

export type { PartitionProgress } from './replay-progress.ts';

/** One record of the dead-letter topic. */
export interface DeadLetter {
  readonly partition: number;
  readonly offset: number;
  readonly key: Buffer | null;
  readonly value: Buffer | null;
  readonly headers: Readonly<Record<string, string>>;
}

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

export interface ReplayRequest {
  /** Most dead letters to replay in this call. */
  readonly limit: number;
  /** Only dead letters whose `ferry-error` header contains this text, case-insensitive. */
  readonly errorContains?: string;
  /** Only dead letters whose command `type` is exactly this. */
  readonly type?: string;
  /**
   * Also dead letters marked `ferry-delivery: in_doubt` (the gateway may have the command
   * already: replaying it may send it twice). Default false: only proven-unsent ones.
   */
  readonly includeInDoubt?: boolean;
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
}

/** What the admin API calls. */
export interface DeadLetterReplayer {
  /** @throws FerryError `illegal_state` while another replay runs; `kafka`; `aborted`. */
  replay(request: ReplayRequest): Promise<ReplayOutcome>;
}

const ERROR_HEADER = 'ferry-error';
const DELIVERY_HEADER = 'ferry-delivery';
const TRUNCATED_HEADER = 'ferry-truncated';

/** The headers ferry adds when it dead-letters a record; every other header is the command's. */
const deadLetterHeaders: ReadonlySet<string> = new Set([
  ERROR_HEADER,
  DELIVERY_HEADER,
  TRUNCATED_HEADER,
  'ferry-original-bytes',
  'ferry-source-topic',
  'ferry-source-partition',
  'ferry-source-offset',
]);

/**
 * Dead letters replayed per transaction: each chunk commits its records with the
 * progress up to them, so a long replay neither builds one huge transaction nor
 * loses what it did when it stops.
 */
export const REPLAY_CHUNK = 1000;

/** The command's own headers (`ferry-transport` among them), without those dead-lettering added. */
export function originalHeaders(headers: Readonly<Record<string, string>>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(headers).filter(([name]) => !deadLetterHeaders.has(name.toLowerCase())),
  );
}

function commandType(value: Buffer | null): string | undefined {
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

/** Whether a dead letter passes the request's filter. */
export function matchesFilter(
  record: DeadLetter,
  filter: Pick<ReplayRequest, 'errorContains' | 'type' | 'includeInDoubt'>,
): boolean {
  // A cut value is not the command: the original stays at the source offset.
  if (record.headers[TRUNCATED_HEADER] === 'true') return false;
  if (record.headers[DELIVERY_HEADER] === 'in_doubt' && !filter.includeInDoubt) return false;
  if (filter.errorContains !== undefined) {
    const error = record.headers[ERROR_HEADER];
    if (error === undefined) return false;
    if (!error.toLowerCase().includes(filter.errorContains.toLowerCase())) return false;
  }
  if (filter.type !== undefined && commandType(record.value) !== filter.type) return false;
  return true;
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

    const records: ReplayRecord[] = [];
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
      records.push({
        key: record.key,
        value: record.value,
        headers: originalHeaders(record.headers),
      });
      return 'continue';
    };
    const scannedTo = await this.#log.scan(from, ends, visit, request.signal);

    const progress = new Map<number, PartitionProgress>();
    for (const [partition, run] of runs) {
      const reached = scannedTo.get(partition) ?? from.get(partition) ?? run.start;
      const before = committed.get(partition);
      const next = nextProgress(run.start, reached, run.firstSkipped, run.replayed);
      if (before?.offset !== next.offset || (before?.metadata ?? null) !== next.metadata) {
        progress.set(partition, next);
      }
    }
    if (records.length > 0 || progress.size > 0) await this.#log.commit(records, progress);
    return { replayed: records.length, scanned, skipped, alreadyReplayed, limitReached };
  }
}
