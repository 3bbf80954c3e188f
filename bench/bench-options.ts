/**
 * The benchmark's settings, from FERRY_BENCH_* variables and command-line flags
 * (`--quick`, `--profile`, `--runs=N`, `--commands=N`), flags winning.
 */

export interface BenchOptions {
  /** An existing broker to use; unset starts a temporary one. */
  readonly brokers: string | undefined;
  /** Measured repetitions per scenario (medians are reported). */
  readonly runs: number;
  /** Commands per measured ferry run (burst). */
  readonly commands: number;
  /** Commands of the warm-up run, excluded from the figures. */
  readonly warmupCommands: number;
  /** Gateway latencies of the scenarios, ms. */
  readonly latenciesMs: readonly number[];
  readonly partitions: number;
  /** Time window of one baseline run, seconds: its throughput is what it did within it. */
  readonly baselineWindowSeconds: number;
  /** Duration of the paced half-of-max-rate run, seconds. */
  readonly halfRateSeconds: number;
  /** Upper bound of one ferry run, seconds. */
  readonly runTimeoutSeconds: number;
  /** Runs ferry with --cpu-prof into .bench/profiles. */
  readonly cpuProfile: boolean;
  /** Timed rounds of each micro-benchmark. */
  readonly microRounds: number;
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
  const latencies = (env.FERRY_BENCH_LATENCIES_MS ?? '0,50')
    .split(',')
    .map((s) => Number(s.trim()));
  if (latencies.some((l) => !Number.isSafeInteger(l) || l < 0)) {
    throw new Error(
      `FERRY_BENCH_LATENCIES_MS must list integers >= 0, got "${env.FERRY_BENCH_LATENCIES_MS}"`,
    );
  }
  return {
    brokers: env.FERRY_BENCH_KAFKA_BROKERS?.trim() || undefined,
    runs: positiveInteger(
      'FERRY_BENCH_RUNS',
      flag(argv, 'runs') ?? env.FERRY_BENCH_RUNS,
      quick ? 1 : 3,
    ),
    commands: positiveInteger(
      'FERRY_BENCH_COMMANDS',
      flag(argv, 'commands') ?? env.FERRY_BENCH_COMMANDS,
      quick ? 20_000 : 60_000,
    ),
    warmupCommands: positiveInteger(
      'FERRY_BENCH_WARMUP_COMMANDS',
      env.FERRY_BENCH_WARMUP_COMMANDS,
      quick ? 5_000 : 20_000,
    ),
    latenciesMs: latencies,
    partitions: positiveInteger('FERRY_BENCH_PARTITIONS', env.FERRY_BENCH_PARTITIONS, 6),
    baselineWindowSeconds: positiveInteger(
      'FERRY_BENCH_BASELINE_WINDOW_S',
      env.FERRY_BENCH_BASELINE_WINDOW_S,
      quick ? 5 : 10,
    ),
    halfRateSeconds: positiveInteger(
      'FERRY_BENCH_HALF_RATE_S',
      env.FERRY_BENCH_HALF_RATE_S,
      quick ? 5 : 10,
    ),
    runTimeoutSeconds: positiveInteger(
      'FERRY_BENCH_RUN_TIMEOUT_S',
      env.FERRY_BENCH_RUN_TIMEOUT_S,
      120,
    ),
    cpuProfile: truthy(flag(argv, 'profile') ?? env.FERRY_BENCH_CPU_PROF),
    microRounds: quick ? 3 : 7,
    quick,
  };
}
