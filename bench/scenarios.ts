/**
 * The scenarios of `make bench` at one gateway latency: ferry at full speed
 * (warm-up, then repeated bursts), ferry paced at half its maximum rate, and the
 * baseline consumer in bounded time windows. Every process under test is a child
 * process so its CPU and memory are its own.
 */
import { join } from 'node:path';
import { type Admin, Kafka, logLevel } from 'kafkajs';
import { freePort } from '../tools/kafka/broker.ts';
import { answers200, BenchChild } from './child-process.ts';
import { BENCH_RCS_SENDER, BENCH_SENDER, type BenchCommand, benchCommands } from './command-mix.ts';
import { ferryEntryArgs, ferryEntryKind } from './ferry-entry.ts';
import type { LoadGenerator } from './load-generator.ts';
import {
  type GatewayCounts,
  type GatewayProbe,
  measuredRun,
  type RunFigures,
} from './measured-run.ts';
import { ResultCollector } from './result-collector.ts';
import { median } from './stats.ts';

export const BENCH_API_KEY = 'bench-api-key-0123456789';
/** ferry's default linger (FERRY_BATCH_LINGER_MS), used for the latency target. */
export const FERRY_DEFAULT_LINGER_MS = 10;

/** What every scenario shares. */
export interface BenchContext {
  readonly root: string;
  readonly logsDir: string;
  readonly profilesDir: string;
  readonly brokers: string;
  readonly admin: Admin;
  readonly generator: LoadGenerator;
  readonly runId: string;
  /** Topics created, to delete at the end when the broker outlives the run. */
  readonly createdTopics: string[];
  /** Next unique command id. */
  nextId: number;
}

/** Unique ids for the next `count` commands. */
function takeCommands(context: BenchContext, count: number): BenchCommand[] {
  const commands = benchCommands(context.nextId, count);
  context.nextId += count;
  return commands;
}

async function createTopics(context: BenchContext, names: readonly string[], partitions: number) {
  await context.admin.createTopics({
    waitForLeaders: true,
    topics: names.map((topic) => ({ topic, numPartitions: partitions, replicationFactor: 1 })),
  });
  context.createdTopics.push(...names);
}

/** Creates a run's topics and starts reading its results topic. */
async function startRun(
  context: BenchContext,
  base: string,
  topics: { readonly results: string } & Record<string, string>,
  partitions: number,
): Promise<ResultCollector> {
  await createTopics(context, Object.values(topics), partitions);
  const collector = new ResultCollector({
    brokers: [context.brokers],
    topic: topics.results,
    groupId: `${base}.collector`,
  });
  await collector.start();
  return collector;
}

/** The emulator as a child process, with its control route as the run's gateway probe. */
export class EmulatorChild implements GatewayProbe {
  readonly child: BenchChild;
  readonly url: string;

  private constructor(child: BenchChild, url: string) {
    this.child = child;
    this.url = url;
  }

  /** Starts `src/emulator/main.ts` on a free loopback port with the given latency. */
  static async start(context: BenchContext, latencyMs: number): Promise<EmulatorChild> {
    const port = await freePort();
    const child = new BenchChild({
      name: 'emulator',
      cwd: context.root,
      args: ['src/emulator/main.ts'],
      logFile: join(context.logsDir, `emulator-${latencyMs}ms.log`),
      env: {
        EMULATOR_API_KEY: BENCH_API_KEY,
        EMULATOR_HOST: '127.0.0.1',
        EMULATOR_PORT: String(port),
        EMULATOR_SENDERS: `${BENCH_SENDER},${BENCH_RCS_SENDER}`,
        EMULATOR_SEED: '7',
        EMULATOR_LATENCY_MS: String(latencyMs),
      },
    });
    const url = `http://127.0.0.1:${port}`;
    await child.waitUntil('an answer', () => answers200(`${url}/__emulator/knobs`), 30_000);
    return new EmulatorChild(child, url);
  }

  async reset(): Promise<void> {
    const response = await fetch(`${this.url}/__emulator/reset`, { method: 'POST' });
    await response.body?.cancel();
  }

  async counts(): Promise<GatewayCounts> {
    const response = await fetch(`${this.url}/__emulator/stats?sendsById=0`);
    const stats = (await response.json()) as {
      envelopes: { sync: number; async: number };
      operations: number;
    };
    return {
      envelopes: stats.envelopes.sync + stats.envelopes.async,
      operations: stats.operations,
    };
  }
}

/** Medians of the figures of repeated runs. */
export interface MedianFigures {
  readonly commandsPerSecond: number;
  readonly p50Ms: number;
  readonly p95Ms: number;
  readonly p99Ms: number;
  readonly maxMs: number;
  /** p99 of produce until the committed result was read. */
  readonly p99VisibleMs: number;
  readonly cpuMsPerThousandCommands: number;
  readonly operationsPerEnvelope: number;
}

export function medians(runs: readonly RunFigures[]): MedianFigures {
  const m = (pick: (r: RunFigures) => number) => median(runs.map(pick));
  return {
    commandsPerSecond: m((r) => r.commandsPerSecond),
    p50Ms: m((r) => r.latency.p50Ms),
    p95Ms: m((r) => r.latency.p95Ms),
    p99Ms: m((r) => r.latency.p99Ms),
    maxMs: m((r) => r.latency.maxMs),
    p99VisibleMs: m((r) => r.visibleLatency.p99Ms),
    cpuMsPerThousandCommands: m((r) => r.cpuMsPerThousandCommands),
    operationsPerEnvelope: m((r) => r.operationsPerEnvelope),
  };
}

export interface FerryScenario {
  readonly warmup: RunFigures;
  readonly runs: readonly RunFigures[];
  readonly median: MedianFigures;
  readonly halfRate: {
    readonly targetRatePerSecond: number;
    readonly run: RunFigures;
    /** The p99 target: linger + gateway latency + 100 ms. */
    readonly p99TargetMs: number;
  };
  /** VmHWM of the ferry process at the end of the scenario, bytes. */
  readonly peakRssBytes: number;
}

export interface ScenarioSettings {
  readonly latencyMs: number;
  readonly runs: number;
  readonly commands: number;
  readonly warmupCommands: number;
  readonly partitions: number;
  readonly halfRateSeconds: number;
  readonly runTimeoutSeconds: number;
  readonly baselineWindowSeconds: number;
  readonly cpuProfile: boolean;
}

type Log = (line: string) => void;

function describe(label: string, run: RunFigures): string {
  return `${label}: ${run.completed}/${run.commands} in ${run.elapsedSeconds.toFixed(2)} s = ${Math.round(
    run.commandsPerSecond,
  )} cmd/s, p99 ${run.latency.p99Ms} ms, ${run.operationsPerEnvelope.toFixed(1)} ops/envelope, cpu ${run.cpuSeconds.toFixed(2)} s`;
}

/** ferry with its defaults: warm-up, `runs` bursts, then a paced run at half the median rate. */
export async function runFerryScenario(
  context: BenchContext,
  emulator: EmulatorChild,
  settings: ScenarioSettings,
  log: Log,
): Promise<FerryScenario> {
  const base = `bench.${context.runId}.ferry.${settings.latencyMs}ms`;
  const topics = {
    commands: `${base}.commands`,
    results: `${base}.results`,
    status: `${base}.status`,
    dlq: `${base}.dlq`,
  };
  const collector = await startRun(context, base, topics, settings.partitions);
  const httpPort = await freePort();
  const ferry = new BenchChild({
    name: 'ferry',
    cwd: context.root,
    args: [
      ...(settings.cpuProfile ? ['--cpu-prof', `--cpu-prof-dir=${context.profilesDir}`] : []),
      // As the container runs it (compiled, production flags) unless FERRY_BENCH_FROM=src.
      ...ferryEntryArgs(context.root, ferryEntryKind(process.env.FERRY_BENCH_FROM)),
    ],
    logFile: join(context.logsDir, `ferry-${settings.latencyMs}ms.log`),
    // Only what ferry needs to find its broker, topics, gateway and ports: every tuning knob at its default.
    env: {
      FERRY_KAFKA_BROKERS: context.brokers,
      FERRY_KAFKA_GROUP: `${base}.group`,
      FERRY_TOPIC_COMMANDS: topics.commands,
      FERRY_TOPIC_RESULTS: topics.results,
      FERRY_TOPIC_STATUS: topics.status,
      FERRY_TOPIC_DLQ: topics.dlq,
      // A fleet of its own: a pause left in the default control topic must not hold a run.
      FERRY_TOPIC_CONTROL: `${base}.control`,
      FERRY_API_KEY: BENCH_API_KEY,
      FERRY_SYNC_BASE_URL: emulator.url,
      FERRY_HTTP_HOST: '127.0.0.1',
      FERRY_HTTP_PORT: String(httpPort),
      FERRY_GRPC_HOST: '127.0.0.1',
      FERRY_GRPC_PORT: String(await freePort()),
      FERRY_ADMIN_LOOPBACK_ONLY: 'true',
      // For experiments with V8 flags (heap caps and the like) on ferry alone.
      ...(process.env.FERRY_BENCH_NODE_OPTIONS
        ? { NODE_OPTIONS: process.env.FERRY_BENCH_NODE_OPTIONS }
        : {}),
    },
  });
  try {
    await ferry.waitUntil(
      'readiness',
      () => answers200(`http://127.0.0.1:${httpPort}/readyz`),
      60_000,
    );
    const setup = {
      generator: context.generator,
      collector,
      subject: ferry,
      gateway: emulator,
      topic: topics.commands,
    };
    const timeoutMs = settings.runTimeoutSeconds * 1000;
    const warmup = await measuredRun(
      setup,
      takeCommands(context, settings.warmupCommands),
      { kind: 'burst' },
      timeoutMs,
    );
    log(describe('  ferry warm-up (excluded)', warmup));
    const runs: RunFigures[] = [];
    for (let i = 1; i <= settings.runs; i++) {
      const run = await measuredRun(
        setup,
        takeCommands(context, settings.commands),
        { kind: 'burst' },
        timeoutMs,
      );
      runs.push(run);
      log(describe(`  ferry run ${i}`, run));
    }
    const summary = medians(runs);
    const targetRatePerSecond = Math.max(1, Math.round(summary.commandsPerSecond / 2));
    const halfCount = Math.max(1, Math.round(targetRatePerSecond * settings.halfRateSeconds));
    const halfRun = await measuredRun(
      setup,
      takeCommands(context, halfCount),
      { kind: 'paced', ratePerSecond: targetRatePerSecond },
      timeoutMs + settings.halfRateSeconds * 1000,
    );
    log(describe(`  ferry paced at ${targetRatePerSecond}/s`, halfRun));
    const peakRssBytes = ferry.usage()?.peakRssBytes ?? Number.NaN;
    return {
      warmup,
      runs,
      median: summary,
      halfRate: {
        targetRatePerSecond,
        run: halfRun,
        p99TargetMs: FERRY_DEFAULT_LINGER_MS + settings.latencyMs + 100,
      },
      peakRssBytes,
    };
  } finally {
    await ferry.stop(30_000);
    await collector.stop();
  }
}

export interface BaselineScenario {
  readonly runs: readonly RunFigures[];
  readonly median: MedianFigures;
  readonly commandsPerRun: number;
  readonly windowSeconds: number;
  readonly peakRssBytes: number;
}

/**
 * Commands for one baseline run: enough to keep it busy through the window
 * (one message in flight per partition, each at least a gateway round trip and a
 * produce), with a margin, and never more than a ferry run.
 */
export function baselineCommandCount(settings: ScenarioSettings): number {
  const perPartitionPerSecond = 1000 / Math.max(4, settings.latencyMs + 2);
  const estimate = Math.ceil(
    1.5 * settings.partitions * settings.baselineWindowSeconds * perPartitionPerSecond,
  );
  return Math.min(settings.commands, estimate);
}

/** The baseline: per run a fresh process and topics, a small warm-up, then one bounded window. */
export async function runBaselineScenario(
  context: BenchContext,
  emulator: EmulatorChild,
  settings: ScenarioSettings,
  log: Log,
): Promise<BaselineScenario> {
  const commandsPerRun = baselineCommandCount(settings);
  const runs: RunFigures[] = [];
  let peakRssBytes = 0;
  for (let i = 1; i <= settings.runs; i++) {
    const base = `bench.${context.runId}.baseline.${settings.latencyMs}ms.${i}`;
    const topics = { commands: `${base}.commands`, results: `${base}.results` };
    const collector = await startRun(context, base, topics, settings.partitions);
    const baseline = new BenchChild({
      name: 'baseline',
      cwd: context.root,
      args: ['--disable-warning=TimeoutNegativeWarning', 'bench/baseline-consumer.ts'],
      logFile: join(context.logsDir, `baseline-${settings.latencyMs}ms-${i}.log`),
      env: {
        BASELINE_BROKERS: context.brokers,
        BASELINE_GROUP: `${base}.group`,
        BASELINE_TOPIC_COMMANDS: topics.commands,
        BASELINE_TOPIC_RESULTS: topics.results,
        BASELINE_GATEWAY_URL: emulator.url,
        BASELINE_API_KEY: BENCH_API_KEY,
        BASELINE_PARTITIONS: String(settings.partitions),
      },
    });
    try {
      await baseline.waitForLog('baseline ready', 60_000);
      const setup = {
        generator: context.generator,
        collector,
        subject: baseline,
        gateway: emulator,
        topic: topics.commands,
      };
      const warmup = await measuredRun(
        setup,
        takeCommands(context, 6 * settings.partitions),
        { kind: 'burst' },
        30_000,
      );
      log(describe(`  baseline warm-up ${i} (excluded)`, warmup));
      const run = await measuredRun(
        setup,
        takeCommands(context, commandsPerRun),
        { kind: 'burst' },
        settings.baselineWindowSeconds * 1000,
      );
      runs.push(run);
      log(describe(`  baseline run ${i}${run.complete ? '' : ' (window ended)'}`, run));
      peakRssBytes = Math.max(peakRssBytes, baseline.usage()?.peakRssBytes ?? 0);
    } finally {
      await baseline.stop(5_000);
      await collector.stop();
    }
  }
  return {
    runs,
    median: medians(runs),
    commandsPerRun,
    windowSeconds: settings.baselineWindowSeconds,
    peakRssBytes,
  };
}

/** A kafkajs admin client for creating and deleting the benchmark's topics. */
export async function connectAdmin(brokers: string): Promise<Admin> {
  const admin = new Kafka({
    clientId: 'ferry-bench-admin',
    brokers: [brokers],
    logLevel: logLevel.NOTHING,
  }).admin();
  await admin.connect();
  return admin;
}
