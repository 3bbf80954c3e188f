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
import { setTimeout as sleep } from 'node:timers/promises';
import type { AnswerTimesStats } from '../src/emulator/answer-times.ts';
import {
  type BenchContext,
  createTopics,
  type EmulatorChild,
  formatAnswerTimes,
  startCollector,
  subjectStartOf,
  takeCommands,
  topicRecordCount,
} from './bench-context.ts';
import type { BenchCommand } from './command-mix.ts';
import { readProcessUsage } from './proc-stats.ts';
import type { ResultCollector, RunTracker } from './result-collector.ts';
import {
  formatRuntime,
  NO_RUNTIME_READING,
  type RuntimeFigures,
  runtimeSince,
} from './runtime-metrics.ts';
import {
  describe,
  describeFirstSeconds,
  type FirstSeconds,
  type ScenarioFigures,
  summarise,
} from './scenario-figures.ts';
import {
  type FerryReading,
  formatStages,
  readFerryMetrics,
  type StageFigures,
  stageFigures,
} from './stage-metrics.ts';
import { type StartedSubject, type SubjectName, startSubject, subjectTopics } from './subjects.ts';

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
    name === 'ferry' || name === 'ferry-before'
      ? [topics.commands, topics.results, topics.status, topics.dlq]
      : [topics.commands, topics.results],
    settings.partitions,
  );
  const collector = await startCollector(context, topics.results, `${base}.collector`);
  let subject: StartedSubject | undefined;
  const start = async (): Promise<StartedSubject> => {
    subject = await startSubject(
      name,
      subjectStartOf(
        context,
        emulator,
        { base, logName: `${name}-${settings.latencyMs}ms-${label}`, topics },
        settings.partitions,
        {
          ferryNodeFlags: settings.cpuProfile
            ? ['--cpu-prof', `--cpu-prof-dir=${context.profilesDir}`]
            : [],
        },
      ),
    );
    return subject;
  };
  try {
    return await body(start, collector, topics.commands);
  } finally {
    await subject?.child.stop(30_000);
    await collector.stop();
  }
}

const cpuOf = (subject: StartedSubject): number => subject.child.usage()?.cpuSeconds ?? Number.NaN;
/** The broker's CPU so far, when the bench started it (NaN for a broker it only uses). */
const brokerCpuOf = (context: BenchContext): number =>
  context.brokerPid === undefined
    ? Number.NaN
    : (readProcessUsage(context.brokerPid)?.cpuSeconds ?? Number.NaN);

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
      const brokerCpuAtFirst = brokerCpuOf(context);
      const windowed = name === 'baseline';
      const deadlineMs = windowed
        ? firstAtMs + settings.baselineWindowSeconds * 1000
        : startedAtMs + settings.runTimeoutSeconds * 1000;
      const results = await tracker.until(deadlineMs);
      const endAtMs =
        results.completed === results.expected ? results.lastResultSeenAtMs : deadlineMs;
      const cpuAtEnd = cpuOf(subject);
      const brokerCpuAtEnd = brokerCpuOf(context);
      const counts = await emulator.counts();
      const ferry = await ferrySince(subject, undefined);
      await subject.child.stop(30_000);
      const figures = summarise(
        { subject: name, kind: 'backlog', latencyMs: settings.latencyMs },
        results,
        produced,
        {
          seconds: (endAtMs - firstAtMs) / 1000,
          fromStartSeconds: (endAtMs - startedAtMs) / 1000,
          cpuSeconds: cpuAtEnd - cpuAtFirst,
          brokerCpuSeconds: brokerCpuAtEnd - brokerCpuAtFirst,
          envelopes: counts.envelopes,
          operations: counts.operations,
          duplicateSends: counts.duplicateIds,
          peakRssBytes: subject.child.usage()?.peakRssBytes ?? Number.NaN,
          commandRecords,
        },
      );
      return reported(figures, ferry, counts.answerTimes, log);
    },
  );
}

/** ferry's own view of a run: its stages, and what its runtime did. */
interface FerryView {
  readonly stages: StageFigures[];
  readonly runtime: RuntimeFigures;
}

/** Logs a scenario's figures (and ferry's view of it) and returns them with the stages. */
function reported(
  figures: ScenarioFigures,
  ferry: FerryView | undefined,
  gateway: AnswerTimesStats,
  log: Log,
  firstStages?: readonly StageFigures[],
): ScenarioFigures {
  log(describe(figures));
  const first = describeFirstSeconds(figures);
  if (first) log(first);
  if (first && firstStages) log(`    its ferry stages p50/p99 ms: ${formatStages(firstStages)}`);
  log(`  gateway's own answer time: ${formatAnswerTimes(gateway)}`);
  if (!ferry) return figures;
  log(`  ferry stages p50/p99 ms: ${formatStages(ferry.stages)}`);
  log(`  ferry runtime: ${formatRuntime(ferry.runtime)}`);
  return { ...figures, stages: ferry.stages };
}

/** ferry's metrics, read now; undefined for the other systems. */
async function readFerry(subject: StartedSubject): Promise<FerryReading | undefined> {
  if (!subject.metricsUrl) return undefined;
  return readFerryMetrics(subject.metricsUrl);
}

/** ferry's stages and runtime since `before` (from its start without one); undefined for the others. */
async function ferrySince(
  subject: StartedSubject,
  before: FerryReading | undefined,
): Promise<FerryView | undefined> {
  const after = await readFerry(subject);
  if (!after) return undefined;
  return {
    stages: stageFigures(before?.stages ?? new Map(), after.stages),
    runtime: runtimeSince(before?.runtime ?? NO_RUNTIME_READING, after.runtime),
  };
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
    const warmResults = await warm.until(warmProduced.lastAckedAtMs + settings.drainSeconds * 1000);
    // The baseline's token warm-up is not its first seconds at the rate: not reported.
    const firstSeconds: FirstSeconds | undefined =
      name === 'baseline'
        ? undefined
        : {
            seconds: settings.warmupSeconds,
            commands: warmResults.expected,
            completed: warmResults.completed,
            latency: warmResults.visibleLatency,
          };
    // One reading of ferry's metrics ends its first seconds and begins the measured part:
    // nothing of ferry runs between (the warm-up was drained).
    const ferryBefore = await readFerry(subject);
    // ferry's stages over its first seconds (from its start): where they went.
    const firstStages =
      firstSeconds && ferryBefore ? stageFigures(new Map(), ferryBefore.stages) : undefined;
    const warmRecords = await topicRecordCount(context, topic);

    await emulator.reset();
    const commands = takeCommands(
      context,
      Math.max(1, Math.round(ratePerSecond * settings.pacedSeconds)),
    );
    const tracker = collector.track(commands);
    const cpuBefore = cpuOf(subject);
    const brokerCpuBefore = brokerCpuOf(context);
    const produced = await generator.paced(topic, commands, ratePerSecond, (c, at) =>
      tracker.sent(c, at),
    );
    const commandRecords = (await topicRecordCount(context, topic)) - warmRecords;
    const deadlineMs = produced.lastAckedAtMs + settings.drainSeconds * 1000;
    const results = await tracker.until(deadlineMs);
    const endAtMs =
      results.completed === results.expected ? results.lastResultSeenAtMs : deadlineMs;
    const cpuAfter = cpuOf(subject);
    const brokerCpuAfter = brokerCpuOf(context);
    const counts = await emulator.counts();
    const ferry = await ferrySince(subject, ferryBefore);
    await subject.child.stop(30_000);
    const figures = summarise(
      { subject: name, kind: 'paced', latencyMs: settings.latencyMs, ratePerSecond },
      results,
      produced,
      {
        seconds: (endAtMs - produced.firstProducedAtMs) / 1000,
        cpuSeconds: cpuAfter - cpuBefore,
        brokerCpuSeconds: brokerCpuAfter - brokerCpuBefore,
        envelopes: counts.envelopes,
        operations: counts.operations,
        duplicateSends: counts.duplicateIds,
        peakRssBytes: subject.child.usage()?.peakRssBytes ?? Number.NaN,
        commandRecords,
      },
    );
    return reported(
      firstSeconds ? { ...figures, firstSeconds } : figures,
      ferry,
      counts.answerTimes,
      log,
      firstStages,
    );
  });
}
