/**
 * The side-by-side scenarios of `make bench`, each run for one subject (ferry, the
 * peer, the baseline) in a process and on topics of its own, so the CPU and the peak
 * memory measured are that scenario's alone:
 *
 * - backlog: the commands are produced first, then the subject is started; timed from
 *   the first result read to the last (the subject's start-up left out), and from the
 *   start to the last for reference;
 * - paced: the subject is started and warmed up, then commands are produced smoothly
 *   at a fixed rate for a bounded time; latency is from the command record's
 *   timestamp until the bench read the result at read_committed.
 *
 * The baseline does one request per command, so it is bounded by a time window in the
 * backlog and left behind by the faster paced rates: its runs say so (`complete`).
 */
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  BENCH_API_KEY,
  type BenchContext,
  createTopics,
  type EmulatorChild,
  startCollector,
  takeCommands,
  topicRecordCount,
} from './bench-context.ts';
import type { BenchCommand } from './command-mix.ts';
import type { ProduceReport } from './load-generator.ts';
import type { ResultCollector, RunResults, RunTracker } from './result-collector.ts';
import type { LatencySummary } from './stats.ts';
import {
  type StartedSubject,
  SUBJECT_LABELS,
  type SubjectName,
  startSubject,
  subjectTopics,
} from './subjects.ts';

export interface ScenarioSettings {
  readonly latencyMs: number;
  readonly partitions: number;
  /** Commands produced before the subject starts. */
  readonly backlogCommands: number;
  /** Upper bound of a backlog drain (ferry, the peer), seconds. */
  readonly runTimeoutSeconds: number;
  /** The baseline's backlog window, seconds from its first result. */
  readonly baselineWindowSeconds: number;
  /** Measured duration of a paced run, seconds. */
  readonly pacedSeconds: number;
  /** Paced warm-up before the measured run (ferry, the peer), seconds. */
  readonly warmupSeconds: number;
  /** After a paced run's last produce, how long its results may take, seconds. */
  readonly drainSeconds: number;
  readonly cpuProfile: boolean;
}

export type ScenarioKind = 'backlog' | 'paced';

/** What one subject did in one scenario. */
export interface ScenarioFigures {
  readonly subject: SubjectName;
  readonly kind: ScenarioKind;
  readonly latencyMs: number;
  /** Paced runs: the produce rate asked for, commands per second. */
  readonly ratePerSecond?: number;
  readonly commands: number;
  readonly completed: number;
  readonly succeeded: number;
  /** False when the window or the deadline ended first. */
  readonly complete: boolean;
  /** Backlog: completed / seconds from the first result read to the last (or to the window's end). Paced: completed / seconds from the first produce to the last result. */
  readonly commandsPerSecond: number;
  /** Backlog: seconds from starting the subject until its last result was read. */
  readonly fromStartSeconds?: number;
  readonly producedPerSecond: number;
  /** Command record timestamp until the bench read the result at read_committed. */
  readonly latency: LatencySummary;
  /** Result record timestamp minus command record timestamp. */
  readonly recordLatency: LatencySummary;
  /** CPU of the subject over the measured part, seconds. */
  readonly cpuSeconds: number;
  readonly cpuMsPerThousandCommands: number;
  readonly envelopes: number;
  readonly operationsPerEnvelope: number;
  /**
   * Command records on the topic for this run's commands: above `commands` when the load
   * generator's producer wrote some twice (a retried produce), which any bridge then
   * answers twice.
   */
  readonly commandRecords: number;
  /** Second results for a command, and ids the gateway accepted twice. */
  readonly duplicateResults: number;
  readonly duplicateSends: number;
  /** VmHWM of the subject's process over the scenario, bytes. */
  readonly peakRssBytes: number;
}

type Log = (line: string) => void;

/** Topics, a result reader and (from `spawnWhen`) the subject; everything stopped at the end. */
async function withSubject<T>(
  context: BenchContext,
  emulator: EmulatorChild,
  settings: ScenarioSettings,
  name: SubjectName,
  label: string,
  body: (
    start: () => Promise<StartedSubject>,
    collector: ResultCollector,
    topic: string,
  ) => Promise<T>,
): Promise<T> {
  const base = `bench.${context.runId}.${name}.${settings.latencyMs}ms.${label}`;
  const topics = subjectTopics(base);
  await createTopics(
    context,
    name === 'ferry'
      ? [topics.commands, topics.results, topics.status, topics.dlq]
      : [topics.commands, topics.results],
    settings.partitions,
  );
  const collector = await startCollector(context, topics.results, `${base}.collector`);
  let subject: StartedSubject | undefined;
  const start = async (): Promise<StartedSubject> => {
    subject = await startSubject(name, {
      root: context.root,
      logFile: join(context.logsDir, `${name}-${settings.latencyMs}ms-${label}.log`),
      brokers: context.brokers,
      group: `${base}.group`,
      topics,
      gatewayUrl: emulator.url,
      apiKey: BENCH_API_KEY,
      partitions: settings.partitions,
      ferryNodeFlags: settings.cpuProfile
        ? ['--cpu-prof', `--cpu-prof-dir=${context.profilesDir}`]
        : [],
    });
    return subject;
  };
  try {
    return await body(start, collector, topics.commands);
  } finally {
    await subject?.child.stop(30_000);
    await collector.stop();
  }
}

function summarise(
  base: Pick<ScenarioFigures, 'subject' | 'kind' | 'latencyMs' | 'ratePerSecond'>,
  results: RunResults,
  produced: ProduceReport,
  measure: {
    readonly seconds: number;
    readonly fromStartSeconds?: number;
    readonly cpuSeconds: number;
    readonly envelopes: number;
    readonly operations: number;
    readonly duplicateSends: number;
    readonly peakRssBytes: number;
    readonly commandRecords: number;
  },
): ScenarioFigures {
  const produceSeconds = Math.max(
    0.001,
    (produced.lastAckedAtMs - produced.firstProducedAtMs) / 1000,
  );
  return {
    ...base,
    commands: results.expected,
    completed: results.completed,
    succeeded: results.succeeded,
    complete: results.completed === results.expected,
    commandsPerSecond: results.completed / Math.max(0.001, measure.seconds),
    ...(measure.fromStartSeconds === undefined
      ? {}
      : { fromStartSeconds: measure.fromStartSeconds }),
    producedPerSecond: produced.count / produceSeconds,
    latency: results.visibleLatency,
    recordLatency: results.latency,
    cpuSeconds: measure.cpuSeconds,
    cpuMsPerThousandCommands:
      results.completed > 0 ? (measure.cpuSeconds * 1e6) / results.completed : Number.NaN,
    envelopes: measure.envelopes,
    operationsPerEnvelope:
      measure.envelopes > 0 ? measure.operations / measure.envelopes : Number.NaN,
    commandRecords: measure.commandRecords,
    duplicateResults: results.duplicates,
    duplicateSends: measure.duplicateSends,
    peakRssBytes: measure.peakRssBytes,
  };
}

function describe(f: ScenarioFigures): string {
  const what = f.kind === 'backlog' ? 'backlog' : `paced ${f.ratePerSecond}/s`;
  return `  ${SUBJECT_LABELS[f.subject]}, ${f.latencyMs} ms, ${what}: ${f.completed}/${f.commands}${
    f.complete ? '' : ' (not all)'
  } ${Math.round(f.commandsPerSecond)} cmd/s, p50 ${f.latency.p50Ms} p99 ${f.latency.p99Ms} ms, ${f.operationsPerEnvelope.toFixed(
    1,
  )} ops/env, cpu ${f.cpuSeconds.toFixed(2)} s, peak RSS ${Math.round(f.peakRssBytes / 1048576)} MiB, duplicates ${f.duplicateResults}/${f.duplicateSends}, command records ${f.commandRecords}`;
}

const cpuOf = (subject: StartedSubject): number => subject.child.usage()?.cpuSeconds ?? Number.NaN;

/** Waits until the run's first result is read. @throws when the subject exits or `timeoutMs` passes. */
async function firstResult(tracker: RunTracker, subject: StartedSubject, timeoutMs: number) {
  const deadline = Date.now() + timeoutMs;
  while (Number.isNaN(tracker.firstResultSeenAtMs)) {
    if (!subject.child.alive)
      throw new Error(`${subject.child.name} exited:\n${subject.child.tail()}`);
    if (Date.now() > deadline)
      throw new Error(
        `${subject.child.name}: no result within ${timeoutMs} ms:\n${subject.child.tail()}`,
      );
    await sleep(10);
  }
  return tracker.firstResultSeenAtMs;
}

/** `backlogCommands` produced, then the subject started and timed until the results are read. */
export async function runBacklog(
  context: BenchContext,
  emulator: EmulatorChild,
  settings: ScenarioSettings,
  name: SubjectName,
  log: Log,
): Promise<ScenarioFigures> {
  return withSubject(
    context,
    emulator,
    settings,
    name,
    'backlog',
    async (start, collector, topic) => {
      const commands = takeCommands(context, settings.backlogCommands);
      await emulator.reset();
      const tracker = collector.track(commands);
      const produced = await context.generator.burst(topic, commands, (c, at) =>
        tracker.sent(c, at),
      );
      const commandRecords = await topicRecordCount(context, topic);
      const startedAtMs = Date.now();
      const subject = await start();
      const firstAtMs = await firstResult(tracker, subject, 90_000);
      const cpuAtFirst = cpuOf(subject);
      const windowed = name === 'baseline';
      const deadlineMs = windowed
        ? firstAtMs + settings.baselineWindowSeconds * 1000
        : startedAtMs + settings.runTimeoutSeconds * 1000;
      const results = await tracker.until(deadlineMs);
      const endAtMs =
        results.completed === results.expected ? results.lastResultSeenAtMs : deadlineMs;
      const cpuAtEnd = cpuOf(subject);
      const counts = await emulator.counts();
      await subject.child.stop(30_000);
      const figures = summarise(
        { subject: name, kind: 'backlog', latencyMs: settings.latencyMs },
        results,
        produced,
        {
          seconds: (endAtMs - firstAtMs) / 1000,
          fromStartSeconds: (endAtMs - startedAtMs) / 1000,
          cpuSeconds: cpuAtEnd - cpuAtFirst,
          envelopes: counts.envelopes,
          operations: counts.operations,
          duplicateSends: counts.duplicateIds,
          peakRssBytes: subject.child.usage()?.peakRssBytes ?? Number.NaN,
          commandRecords,
        },
      );
      log(describe(figures));
      return figures;
    },
  );
}

/** The subject started and warmed up, then fed `ratePerSecond` for `pacedSeconds`. */
export async function runPaced(
  context: BenchContext,
  emulator: EmulatorChild,
  settings: ScenarioSettings,
  name: SubjectName,
  ratePerSecond: number,
  log: Log,
): Promise<ScenarioFigures> {
  const label = `paced${ratePerSecond}`;
  return withSubject(context, emulator, settings, name, label, async (start, collector, topic) => {
    const subject = await start();
    await subject.ready(90_000);
    const { generator } = context;
    // The baseline gets a token warm-up: at these rates a longer one would leave it a backlog.
    const warmup: BenchCommand[] =
      name === 'baseline'
        ? takeCommands(context, 6 * settings.partitions)
        : takeCommands(context, Math.max(1, Math.round(ratePerSecond * settings.warmupSeconds)));
    const warm = collector.track(warmup);
    const warmProduced = await generator.paced(topic, warmup, ratePerSecond, (c, at) =>
      warm.sent(c, at),
    );
    await warm.until(warmProduced.lastAckedAtMs + settings.drainSeconds * 1000);
    const warmRecords = await topicRecordCount(context, topic);

    await emulator.reset();
    const commands = takeCommands(
      context,
      Math.max(1, Math.round(ratePerSecond * settings.pacedSeconds)),
    );
    const tracker = collector.track(commands);
    const cpuBefore = cpuOf(subject);
    const produced = await generator.paced(topic, commands, ratePerSecond, (c, at) =>
      tracker.sent(c, at),
    );
    const commandRecords = (await topicRecordCount(context, topic)) - warmRecords;
    const deadlineMs = produced.lastAckedAtMs + settings.drainSeconds * 1000;
    const results = await tracker.until(deadlineMs);
    const endAtMs =
      results.completed === results.expected ? results.lastResultSeenAtMs : deadlineMs;
    const cpuAfter = cpuOf(subject);
    const counts = await emulator.counts();
    await subject.child.stop(30_000);
    const figures = summarise(
      { subject: name, kind: 'paced', latencyMs: settings.latencyMs, ratePerSecond },
      results,
      produced,
      {
        seconds: (endAtMs - produced.firstProducedAtMs) / 1000,
        cpuSeconds: cpuAfter - cpuBefore,
        envelopes: counts.envelopes,
        operations: counts.operations,
        duplicateSends: counts.duplicateIds,
        peakRssBytes: subject.child.usage()?.peakRssBytes ?? Number.NaN,
        commandRecords,
      },
    );
    log(describe(figures));
    return figures;
  });
}
