/**
 * The urgent lane under a bulk backlog: the same backlog drained twice by ferry with an
 * urgent lane configured, once alone and once while urgent commands arrive at
 * `urgentRate` per second on the urgent topic. Reports the bulk throughput of both runs
 * (the urgent traffic may cost at most 10 %) and the urgent commands' latency (target:
 * p99 within the linger, the gateway latency and 100 ms). The run alone goes first, so
 * the run order favours the second (see docs/benchmarks.md on run-order bias): the
 * ratio is, if anything, flattered.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { AnswerTimesStats } from '../src/emulator/answer-times.ts';
import {
  type BenchContext,
  createTopics,
  type EmulatorChild,
  FERRY_DEFAULT_LINGER_MS,
  formatAnswerTimes,
  startCollector,
  subjectStartOf,
  takeCommands,
} from './bench-context.ts';
import { formatRuntime, runtimeSince } from './runtime-metrics.ts';
import {
  formatStages,
  readFerryMetrics,
  type StageFigures,
  stageFigures,
} from './stage-metrics.ts';
import type { LatencySummary } from './stats.ts';
import { startSubject, subjectTopics } from './subjects.ts';

export interface UrgentLaneSettings {
  readonly latencyMs: number;
  readonly partitions: number;
  /** Partitions of the urgent commands topic (the bulk topic has `partitions`). */
  readonly urgentPartitions: number;
  readonly backlogCommands: number;
  readonly urgentRate: number;
  /** Upper bound of one drain, seconds. */
  readonly runTimeoutSeconds: number;
  /** Runs ferry with --cpu-prof into the bench's profiles folder. */
  readonly cpuProfile: boolean;
  /**
   * An experiment, not a deployment: the urgent commands read by a second ferry process of
   * their own instead of a lane beside the bulk one, so they share the machine but not the
   * event loop. What an urgent lane on a thread of its own could at best give.
   */
  readonly separateProcess: boolean;
}

export interface UrgentLaneFigures {
  readonly latencyMs: number;
  readonly backlogCommands: number;
  /** Bulk commands per second, first result to last, without and with urgent traffic. */
  readonly bulkAloneRate: number;
  readonly bulkWithUrgentRate: number;
  readonly urgentRate: number;
  readonly urgentPartitions: number;
  readonly urgentCommands: number;
  readonly urgentCompleted: number;
  /** Produce until the bench read the result at read_committed. */
  readonly urgentLatency: LatencySummary;
  readonly urgentP99TargetMs: number;
  readonly duplicateSends: number;
  /** ferry's own stages (ferry_pipeline_stage_seconds) during the drain with urgent traffic, per lane. */
  readonly urgentStages: readonly StageFigures[];
  readonly bulkStages: readonly StageFigures[];
  /** The gateway emulator's own answer times during the drain with urgent traffic. */
  readonly gatewayAnswerTimes: AnswerTimesStats;
}

type Log = (line: string) => void;

/** One drain of `backlogCommands` bulk commands, with urgent ones at `urgentRate` when asked. */
async function drain(
  context: BenchContext,
  emulator: EmulatorChild,
  settings: UrgentLaneSettings,
  label: string,
  withUrgent: boolean,
  log: Log,
) {
  const base = `bench.${context.runId}.urgent-lane.${settings.latencyMs}ms.${label}`;
  const topics = subjectTopics(base);
  const urgentTopic = `${topics.commands}.urgent`;
  await createTopics(
    context,
    [topics.commands, topics.results, topics.status, topics.dlq],
    settings.partitions,
  );
  await createTopics(context, [urgentTopic], settings.urgentPartitions);
  const collector = await startCollector(context, topics.results, `${base}.collector`);
  const bulk = takeCommands(context, settings.backlogCommands);
  const bulkRun = collector.track(bulk);
  await emulator.reset();
  await context.generator.burst(topics.commands, bulk, (c, at) => bulkRun.sent(c, at));
  const profile = settings.cpuProfile
    ? { ferryNodeFlags: ['--cpu-prof', `--cpu-prof-dir=${context.profilesDir}`] }
    : {};
  const separate = settings.separateProcess && withUrgent;
  const subject = await startSubject(
    'ferry',
    subjectStartOf(
      context,
      emulator,
      { base, logName: `ferry-urgent-lane-${settings.latencyMs}ms-${label}`, topics },
      settings.partitions,
      {
        ...(separate ? {} : { ferryEnv: { FERRY_TOPIC_COMMANDS_URGENT: urgentTopic } }),
        ...profile,
      },
    ),
  );
  const urgentProcess = separate
    ? await startSubject(
        'ferry',
        subjectStartOf(
          context,
          emulator,
          {
            base: `${base}.urgent-process`,
            logName: `ferry-urgent-lane-${settings.latencyMs}ms-${label}-urgent-process`,
            topics: { ...topics, commands: urgentTopic, control: `${topics.control}.urgent` },
          },
          settings.partitions,
          profile,
        ),
      )
    : undefined;
  try {
    await subject.ready(90_000);
    await urgentProcess?.ready(90_000);
    const metricsUrl = subject.metricsUrl ?? '';
    const urgentMetricsUrl = urgentProcess?.metricsUrl ?? '';
    const before = await readFerryMetrics(metricsUrl);
    const urgentBefore = urgentProcess ? await readFerryMetrics(urgentMetricsUrl) : before;
    const deadlineMs = Date.now() + settings.runTimeoutSeconds * 1000;
    while (Number.isNaN(bulkRun.firstResultSeenAtMs)) {
      if (Date.now() > deadlineMs) throw new Error(`urgent lane ${label}: no bulk result`);
      await sleep(10);
    }
    // Urgent commands from the first bulk result until the backlog is drained.
    const urgent = withUrgent
      ? takeCommands(context, Math.ceil((settings.urgentRate * settings.runTimeoutSeconds) / 2))
      : [];
    const urgentRun = collector.trackAlso(urgent);
    let producing = withUrgent;
    const produced = withUrgent
      ? (async () => {
          let next = 0;
          const startedAt = Date.now();
          while (producing && next < urgent.length) {
            const due = Math.floor(((Date.now() - startedAt) / 1000) * settings.urgentRate) + 1;
            if (due > next) {
              const chunk = urgent.slice(next, Math.min(due, urgent.length));
              next += chunk.length;
              await context.generator.burst(urgentTopic, chunk, (c, at) => urgentRun.sent(c, at));
            } else {
              await sleep(5);
            }
          }
          return next;
        })()
      : Promise.resolve(0);
    const bulkResults = await bulkRun.until(deadlineMs);
    producing = false;
    const urgentSent = await produced;
    const urgentResults = await urgentRun.until(Date.now() + 10_000);
    const after = await readFerryMetrics(metricsUrl);
    const urgentAfter = urgentProcess ? await readFerryMetrics(urgentMetricsUrl) : after;
    // A process of its own has the urgent commands as its only (unlabelled) lane.
    const urgentStages = urgentProcess
      ? stageFigures(urgentBefore.stages, urgentAfter.stages)
      : stageFigures(before.urgentStages, after.urgentStages);
    const bulkStages = stageFigures(before.stages, after.stages);
    const counts = await emulator.counts();
    const seconds = (bulkResults.lastResultSeenAtMs - bulkResults.firstResultSeenAtMs) / 1000;
    const rate = bulkResults.completed / seconds;
    log(
      `# urgent lane ${label}: bulk ${bulkResults.completed}/${bulkResults.expected} in ${seconds.toFixed(1)} s (${Math.round(rate)}/s)` +
        (withUrgent
          ? `; urgent ${urgentResults.completed}/${urgentSent}, p50/p99 ${urgentResults.visibleLatency.p50Ms}/${urgentResults.visibleLatency.p99Ms} ms`
          : ''),
    );
    if (withUrgent) log(`  urgent lane stages p50/p99 ms: ${formatStages(urgentStages)}`);
    log(`  bulk lane stages p50/p99 ms: ${formatStages(bulkStages)}`);
    log(`  gateway's own answer time: ${formatAnswerTimes(counts.answerTimes)}`);
    log(`  ferry runtime: ${formatRuntime(runtimeSince(before.runtime, after.runtime))}`);
    if (urgentProcess) {
      log(
        `  urgent process runtime: ${formatRuntime(runtimeSince(urgentBefore.runtime, urgentAfter.runtime))}`,
      );
    }
    return {
      rate,
      urgentSent,
      urgentResults,
      duplicateSends: counts.duplicateIds,
      urgentStages,
      bulkStages,
      gatewayAnswerTimes: counts.answerTimes,
    };
  } finally {
    await urgentProcess?.child.stop(30_000);
    await subject.child.stop(30_000);
    await collector.stop();
  }
}

export async function runUrgentLane(
  context: BenchContext,
  emulator: EmulatorChild,
  settings: UrgentLaneSettings,
  log: Log,
): Promise<UrgentLaneFigures> {
  const alone = await drain(context, emulator, settings, 'alone', false, log);
  const mixed = await drain(context, emulator, settings, 'with-urgent', true, log);
  return {
    latencyMs: settings.latencyMs,
    backlogCommands: settings.backlogCommands,
    bulkAloneRate: alone.rate,
    bulkWithUrgentRate: mixed.rate,
    urgentRate: settings.urgentRate,
    urgentPartitions: settings.urgentPartitions,
    urgentCommands: mixed.urgentSent,
    urgentCompleted: mixed.urgentResults.completed,
    urgentLatency: mixed.urgentResults.visibleLatency,
    urgentP99TargetMs: FERRY_DEFAULT_LINGER_MS + settings.latencyMs + 100,
    duplicateSends: alone.duplicateSends + mixed.duplicateSends,
    urgentStages: mixed.urgentStages,
    bulkStages: mixed.bulkStages,
    gatewayAnswerTimes: mixed.gatewayAnswerTimes,
  };
}

/** The scenario's lines of the report. */
export function formatUrgentLane(figures: UrgentLaneFigures): string {
  const ratio = figures.bulkWithUrgentRate / figures.bulkAloneRate;
  const p99 = figures.urgentLatency.p99Ms;
  return [
    `urgent lane (backlog ${figures.backlogCommands}, gateway ${figures.latencyMs} ms, urgent ${figures.urgentRate}/s on ${figures.urgentPartitions} partition(s)):`,
    `  bulk alone ${Math.round(figures.bulkAloneRate)}/s, with urgent traffic ${Math.round(figures.bulkWithUrgentRate)}/s (${ratio.toFixed(2)}×; target ≥ 0.90 — ${ratio >= 0.9 ? 'met' : 'missed'})`,
    `  urgent p50/p99 ${figures.urgentLatency.p50Ms}/${p99} ms (${figures.urgentCompleted}/${figures.urgentCommands} answered; target p99 ≤ ${figures.urgentP99TargetMs} ms — ${p99 <= figures.urgentP99TargetMs ? 'met' : 'missed'})`,
    `  urgent lane stages p50/p99 ms: ${formatStages(figures.urgentStages)}`,
    `  gateway's own answer time: ${formatAnswerTimes(figures.gatewayAnswerTimes)}`,
    `  ids sent twice: ${figures.duplicateSends}`,
  ].join('\n');
}
