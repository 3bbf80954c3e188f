/**
 * The service-level metrics of the commit path: how long commands take from their
 * producer to their committed result (`ferry_end_to_end_seconds`), what the gateway
 * accepted (`ferry_messages_sent_total`), and how long the oldest command of each owned
 * partition has been waiting for its commit (`ferry_oldest_uncommitted_seconds`).
 * Everything is counted once a result is committed: a batch read again after a rebalance
 * or a failed commit counts when it finally commits, never twice.
 */
import { channelOfType } from '../observability/channels.ts';
import { boundedTypeLabel, type FerryMetrics } from '../observability/metrics.ts';
import { incEach } from '../observability/tally.ts';
import type { Command } from './command.ts';
import type { Result } from './result.ts';

/** How often the age gauge is refreshed: it grows while nothing happens, so a timer keeps it current between scrapes. */
const AGE_REFRESH_MS = 1_000;

/** Commands of a partition read and not committed, up to `lastOffset`, first read at `sinceMs`. */
interface Waiting {
  readonly lastOffset: bigint;
  readonly sinceMs: number;
}

export interface CommitMetricsOptions {
  readonly metrics: Pick<FerryMetrics, 'endToEnd' | 'messagesSent' | 'oldestUncommitted'>;
  /** The clock, ms since the epoch (tests pass their own). */
  readonly now?: () => number;
}

/**
 * Tracks, per owned partition, the commands read and not committed. The age counts from
 * when ferry first read the oldest of them, not from its Kafka timestamp: a backlog is
 * what `ferry_consumer_lag` shows; this shows commands stuck inside ferry (a gateway that
 * does not answer, a commit that keeps failing). A batch read again keeps its first time.
 */
export class CommitMetrics {
  readonly #metrics: CommitMetricsOptions['metrics'];
  readonly #now: () => number;
  readonly #waiting = new Map<number, Waiting[]>();
  readonly #owned = new Set<number>();
  #timer: NodeJS.Timeout | undefined;

  constructor(options: CommitMetricsOptions) {
    this.#metrics = options.metrics;
    this.#now = options.now ?? Date.now;
  }

  /** Starts refreshing the age gauge. Idempotent. */
  start(): void {
    if (this.#timer) return;
    this.#timer = setInterval(() => this.refresh(), AGE_REFRESH_MS);
    this.#timer.unref();
  }

  /** Stops refreshing. Idempotent. */
  stop(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
  }

  /** The partitions this replica owns now: lost ones lose their series, new ones start at 0. */
  owned(partitions: readonly number[]): void {
    const now = new Set(partitions);
    for (const partition of this.#owned) {
      if (now.has(partition)) continue;
      this.#owned.delete(partition);
      this.#waiting.delete(partition);
      this.#metrics.oldestUncommitted.remove({ partition: String(partition) });
    }
    for (const partition of now) this.#owned.add(partition);
    this.refresh();
  }

  /** Commands of a partition up to `lastOffset` were read (again). */
  read(partition: number, lastOffset: string): void {
    const last = BigInt(lastOffset);
    let waiting = this.#waiting.get(partition);
    if (!waiting) {
      waiting = [];
      this.#waiting.set(partition, waiting);
    }
    // Already waiting since an earlier read: the batch is read again, its age goes on.
    if (waiting.some((entry) => entry.lastOffset >= last)) return;
    waiting.push({ lastOffset: last, sinceMs: this.#now() });
  }

  /** A batch of a partition up to `lastOffset` is finished: committed, or skipped as committed before. */
  done(partition: number, lastOffset: string): void {
    const last = BigInt(lastOffset);
    const waiting = this.#waiting.get(partition);
    if (!waiting) return;
    const still = waiting.filter((entry) => entry.lastOffset > last);
    if (still.length > 0) this.#waiting.set(partition, still);
    else this.#waiting.delete(partition);
    this.refresh();
  }

  /**
   * The results of these commands were committed (same order): end-to-end times by type
   * and the sends the gateway accepted are counted.
   */
  committed(commands: readonly Command[], results: readonly Result[]): void {
    const now = this.#now();
    const accepted: { channel: string }[] = [];
    commands.forEach((command, index) => {
      const result = results[index];
      const type = boundedTypeLabel(result?.type ?? command.type);
      const producedMs = Number(command.record.timestamp);
      if (Number.isFinite(producedMs)) {
        // A producer's clock ahead of this one would give a negative time: counted as 0.
        this.#metrics.endToEnd.observe({ type }, Math.max(0, now - producedMs) / 1000);
      }
      if (!result?.success || result.stage !== 'upstream') return;
      const channel = channelOfType(result.type);
      if (channel) accepted.push({ channel });
    });
    incEach(this.#metrics.messagesSent, accepted);
  }

  /** Per owned partition, how long its oldest command read and not committed has waited (ms, 0: none). */
  ages(): Map<number, number> {
    const now = this.#now();
    const ages = new Map<number, number>();
    for (const partition of this.#owned) {
      let oldest = now;
      for (const entry of this.#waiting.get(partition) ?? [])
        oldest = Math.min(oldest, entry.sinceMs);
      ages.set(partition, now - oldest);
    }
    return ages;
  }

  /** Sets the age gauge of every owned partition from the clock. */
  refresh(): void {
    for (const [partition, ageMs] of this.ages()) {
      this.#metrics.oldestUncommitted.set({ partition: String(partition) }, ageMs / 1000);
    }
  }
}
