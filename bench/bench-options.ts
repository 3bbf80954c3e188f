/**
 * The benchmark's settings, from FERRY_BENCH_* variables and command-line flags
 * (`--quick`, `--profile`, `--backlog=N`, `--paced-seconds=N`, `--no-ceilings`), flags winning;
 * FERRY_BENCH_URGENT_BACKLOG (0 skips the urgent-lane scenario), FERRY_BENCH_URGENT_RATE and
 * FERRY_BENCH_URGENT_PARTITIONS.
 */
import { SUBJECTS, type SubjectName } from './subjects.ts';

export interface BenchOptions {
  /** An existing broker to use; unset starts a temporary one. */
  readonly brokers: string | undefined;
  /** The systems compared, in the order they run (ferry, peer, baseline). */
  readonly subjects: readonly SubjectName[];
  /** Gateway latencies of the scenarios, ms. */
  readonly latenciesMs: readonly number[];
  readonly partitions: number;
  /** Commands produced before the subject starts in the backlog scenario. */
  readonly backlogCommands: number;
  /** Produce rates of the paced scenarios, commands per second. */
  readonly pacedRates: readonly number[];
  /** Measured duration of a paced run, seconds. */
  readonly pacedSeconds: number;
  /** Paced warm-up before the measured run, seconds. */
  readonly warmupSeconds: number;
  /** How long a paced run's results may take after its last produce, seconds. */
  readonly drainSeconds: number;
  /** The baseline's backlog window, seconds from its first result. */
  readonly baselineWindowSeconds: number;
  /** Upper bound of one backlog drain, seconds. */
  readonly runTimeoutSeconds: number;
  /** Runs ferry with --cpu-prof into .bench/profiles. */
  readonly cpuProfile: boolean;
  /** Also measure kafkajs and Kafka's own perf tools alone (bench/client-ceilings.ts). */
  readonly clientCeilings: boolean;
  /** Timed rounds of each micro-benchmark. */
  readonly microRounds: number;
  /** Bulk commands behind which the urgent-lane scenario sends urgent ones; 0 skips it. */
  readonly urgentBacklogCommands: number;
  /** Urgent commands per second during that drain. */
  readonly urgentRate: number;
  /** Partitions of the urgent topic [the bulk topic's]. */
  readonly urgentPartitions: number | undefined;
  /** The urgent commands read by a second ferry process instead of a lane (an experiment; see bench/urgent-lane.ts). */
  readonly urgentSeparateProcess: boolean;
  readonly quick: boolean;
}

function flag(argv: readonly string[], name: string): string | undefined {
  const prefix = `--${name}=`;
  const found = argv.find((arg) => arg === `--${name}` || arg.startsWith(prefix));
  if (found === undefined) return undefined;
  return found.startsWith(prefix) ? found.slice(prefix.length) : '1';
}

function positiveInteger(name: string, raw: string | undefined, fallback: number): number {
  if (raw === undefined || raw.trim() === '') return fallback;
  const value = Number(raw);
  if (!Number.isSafeInteger(value) || value < 1) {
    throw new Error(`${name} must be a positive integer, got "${raw}"`);
  }
  return value;
}

/** A comma-separated list of integers >= `min`. @throws Error naming the variable otherwise. */
function integerList(name: string, raw: string, min: number): number[] {
  const values = raw.split(',').map((s) => Number(s.trim()));
  if (values.length === 0 || values.some((v) => !Number.isSafeInteger(v) || v < min)) {
    throw new Error(`${name} must list integers >= ${min}, got "${raw}"`);
  }
  return values;
}

function truthy(raw: string | undefined): boolean {
  return raw !== undefined && /^(1|true|yes|on)$/i.test(raw.trim());
}

/**
 * Reads the options. @throws Error naming the variable when a number is not a positive integer.
 */
export function readBenchOptions(
  env: Readonly<Record<string, string | undefined>>,
  argv: readonly string[],
): BenchOptions {
  const quick = truthy(flag(argv, 'quick') ?? env.FERRY_BENCH_QUICK);
  const latencies = integerList(
    'FERRY_BENCH_LATENCIES_MS',
    env.FERRY_BENCH_LATENCIES_MS ?? '0,50',
    0,
  );
  const pacedRates = integerList(
    'FERRY_BENCH_PACED_RATES',
    env.FERRY_BENCH_PACED_RATES ?? '200,5000',
    1,
  );
  // ferry-before (an earlier build, FERRY_BENCH_BEFORE) runs only when asked for.
  const defaults = SUBJECTS.filter((s) => s !== 'ferry-before' || env.FERRY_BENCH_BEFORE);
  const subjects = (env.FERRY_BENCH_SUBJECTS ?? defaults.join(',')).split(',').map((s) => s.trim());
  const unknown = subjects.filter((s) => !(SUBJECTS as readonly string[]).includes(s));
  if (unknown.length > 0 || subjects.length === 0) {
    throw new Error(
      `FERRY_BENCH_SUBJECTS must list some of ${SUBJECTS.join(', ')}, got "${env.FERRY_BENCH_SUBJECTS}"`,
    );
  }
  return {
    brokers: env.FERRY_BENCH_KAFKA_BROKERS?.trim() || undefined,
    // In the order asked for (the first of a scenario runs on a colder broker and emulator:
    // swap the order to see what that costs), else in the table's order.
    subjects: env.FERRY_BENCH_SUBJECTS
      ? SUBJECTS.filter((s) => subjects.includes(s)).sort(
          (a, b) => subjects.indexOf(a) - subjects.indexOf(b),
        )
      : SUBJECTS.filter((s) => subjects.includes(s)),
    latenciesMs: latencies,
    partitions: positiveInteger('FERRY_BENCH_PARTITIONS', env.FERRY_BENCH_PARTITIONS, 6),
    backlogCommands: positiveInteger(
      'FERRY_BENCH_BACKLOG_COMMANDS',
      flag(argv, 'backlog') ?? env.FERRY_BENCH_BACKLOG_COMMANDS,
      quick ? 30_000 : 100_000,
    ),
    pacedRates,
    pacedSeconds: positiveInteger(
      'FERRY_BENCH_PACED_S',
      flag(argv, 'paced-seconds') ?? env.FERRY_BENCH_PACED_S,
      quick ? 5 : 12,
    ),
    warmupSeconds: positiveInteger('FERRY_BENCH_WARMUP_S', env.FERRY_BENCH_WARMUP_S, quick ? 2 : 3),
    drainSeconds: positiveInteger('FERRY_BENCH_DRAIN_S', env.FERRY_BENCH_DRAIN_S, 8),
    baselineWindowSeconds: positiveInteger(
      'FERRY_BENCH_BASELINE_WINDOW_S',
      env.FERRY_BENCH_BASELINE_WINDOW_S,
      quick ? 5 : 10,
    ),
    runTimeoutSeconds: positiveInteger(
      'FERRY_BENCH_RUN_TIMEOUT_S',
      env.FERRY_BENCH_RUN_TIMEOUT_S,
      120,
    ),
    cpuProfile: truthy(flag(argv, 'profile') ?? env.FERRY_BENCH_CPU_PROF),
    clientCeilings: !truthy(flag(argv, 'no-ceilings') ?? env.FERRY_BENCH_NO_CEILINGS),
    microRounds: quick ? 3 : 7,
    urgentBacklogCommands:
      env.FERRY_BENCH_URGENT_BACKLOG === '0'
        ? 0
        : positiveInteger(
            'FERRY_BENCH_URGENT_BACKLOG',
            env.FERRY_BENCH_URGENT_BACKLOG,
            quick ? 100_000 : 1_000_000,
          ),
    urgentRate: positiveInteger('FERRY_BENCH_URGENT_RATE', env.FERRY_BENCH_URGENT_RATE, 50),
    urgentPartitions:
      env.FERRY_BENCH_URGENT_PARTITIONS === undefined
        ? undefined
        : positiveInteger('FERRY_BENCH_URGENT_PARTITIONS', env.FERRY_BENCH_URGENT_PARTITIONS, 1),
    urgentSeparateProcess: truthy(env.FERRY_BENCH_URGENT_SEPARATE),
    quick,
  };
}
