/**
 * Reads a results topic at read_committed and matches each result to the command
 * with the same key: latency is the result record's timestamp minus the command
 * record's timestamp (both set by their producers), and a run is complete when
 * every command of it has its result.
 */
import { type Consumer, Kafka, logLevel } from 'kafkajs';
import type { BenchCommand } from './command-mix.ts';
import { type LatencySummary, summariseLatencies } from './stats.ts';

export interface ResultCollectorOptions {
  readonly brokers: readonly string[];
  readonly topic: string;
  readonly groupId: string;
}

/** What one run's results showed, up to the moment it ended. */
export interface RunResults {
  readonly expected: number;
  readonly completed: number;
  /** Results with `"success":true`. */
  readonly succeeded: number;
  /** Wall-clock time the first matched result was read, ms since the epoch (NaN if none). */
  readonly firstResultSeenAtMs: number;
  /** Wall-clock time the last matched result was read, ms since the epoch (NaN if none). */
  readonly lastResultSeenAtMs: number;
  /** Second and later results for a command of the run. */
  readonly duplicates: number;
  readonly latency: LatencySummary;
  /** Produce until the collector read the result at read_committed (includes the commit and the fetch). */
  readonly visibleLatency: LatencySummary;
}

/** The commands of one run still waiting for their result, and what came back so far. */
export class RunTracker {
  readonly expected: number;
  readonly latenciesMs: number[] = [];
  readonly visibleLatenciesMs: number[] = [];
  succeeded = 0;
  /** Wall-clock time the first matched result was read, ms since the epoch (NaN if none). */
  firstResultSeenAtMs = Number.NaN;
  lastResultSeenAtMs = Number.NaN;
  /** Results for a key of this run that already had one (a bridge that answered twice). */
  duplicates = 0;
  readonly #producedAtMs = new Map<string, number>();
  readonly #answered = new Set<string>();
  readonly #whenDone: Promise<void>;
  #resolveDone: () => void = () => undefined;

  constructor(commands: readonly BenchCommand[]) {
    this.expected = commands.length;
    for (const command of commands) this.#producedAtMs.set(command.key, Number.NaN);
    this.#whenDone = new Promise((resolve) => {
      this.#resolveDone = resolve;
    });
    if (this.expected === 0) this.#resolveDone();
  }

  /** Records the timestamp given to these commands' records. */
  sent(chunk: readonly BenchCommand[], producedAtMs: number): void {
    for (const command of chunk) this.#producedAtMs.set(command.key, producedAtMs);
  }

  get remaining(): number {
    return this.expected - this.latenciesMs.length;
  }

  /** True when the key belongs to this run and had no result yet; then the result is counted. */
  take(key: string, resultTimestampMs: number, seenAtMs: number, success: boolean): boolean {
    const producedAtMs = this.#producedAtMs.get(key);
    if (producedAtMs === undefined) {
      if (this.#answered.has(key)) this.duplicates += 1;
      return false;
    }
    this.#answered.add(key);
    if (Number.isNaN(this.firstResultSeenAtMs)) this.firstResultSeenAtMs = seenAtMs;
    this.#producedAtMs.delete(key);
    this.latenciesMs.push(resultTimestampMs - producedAtMs);
    this.visibleLatenciesMs.push(seenAtMs - producedAtMs);
    if (success) this.succeeded += 1;
    this.lastResultSeenAtMs = seenAtMs;
    if (this.remaining === 0) this.#resolveDone();
    return true;
  }

  /** Resolves when every result came back or at `deadlineMs` (epoch ms), whichever is first. */
  async until(deadlineMs: number): Promise<RunResults> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, Math.max(0, deadlineMs - Date.now()));
    });
    await Promise.race([this.#whenDone, timeout]);
    clearTimeout(timer);
    return {
      expected: this.expected,
      completed: this.latenciesMs.length,
      succeeded: this.succeeded,
      firstResultSeenAtMs: this.firstResultSeenAtMs,
      lastResultSeenAtMs: this.lastResultSeenAtMs,
      duplicates: this.duplicates,
      latency: summariseLatencies([...this.latenciesMs]),
      visibleLatency: summariseLatencies([...this.visibleLatenciesMs]),
    };
  }
}

/** One consumer on a results topic, feeding the run being measured. */
export class ResultCollector {
  readonly #consumer: Consumer;
  readonly #topic: string;
  /** The run being measured, and runs measured beside it (the urgent lane's beside the bulk). */
  #runs: RunTracker[] = [];
  /** Results whose key belonged to no current run (duplicates or leftovers). */
  unmatched = 0;

  constructor(options: ResultCollectorOptions) {
    const kafka = new Kafka({
      clientId: 'ferry-bench-collector',
      brokers: [...options.brokers],
      logLevel: logLevel.NOTHING,
    });
    this.#consumer = kafka.consumer({
      groupId: options.groupId,
      readUncommitted: false,
      maxWaitTimeInMs: 50,
      maxBytesPerPartition: 4 * 1024 * 1024,
    });
    this.#topic = options.topic;
  }

  /** Joins, positioned at the start of the (fresh) topic; resolves once partitions are assigned. */
  async start(): Promise<void> {
    const joined = new Promise<void>((resolve) => {
      this.#consumer.on(this.#consumer.events.GROUP_JOIN, () => resolve());
    });
    await this.#consumer.connect();
    await this.#consumer.subscribe({ topics: [this.#topic], fromBeginning: true });
    await this.#consumer.run({
      autoCommit: true,
      eachBatch: async ({ batch }) => {
        const seenAtMs = Date.now();
        const runs = this.#runs;
        for (const message of batch.messages) {
          const key = message.key?.toString('utf8') ?? '';
          const success = message.value?.includes('"success":true') ?? false;
          const at = Number(message.timestamp);
          if (!runs.some((run) => run.take(key, at, seenAtMs, success))) this.unmatched += 1;
        }
      },
    });
    await joined;
  }

  /** Starts tracking a run's commands, instead of any run before; register before producing them. */
  track(commands: readonly BenchCommand[]): RunTracker {
    const run = new RunTracker(commands);
    this.#runs = [run];
    return run;
  }

  /** Tracks a second run's commands beside the current one (their keys are distinct). */
  trackAlso(commands: readonly BenchCommand[]): RunTracker {
    const run = new RunTracker(commands);
    this.#runs = [...this.#runs, run];
    return run;
  }

  async stop(): Promise<void> {
    await this.#consumer.disconnect();
  }
}
