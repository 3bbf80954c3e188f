/** What one system did in one scenario of `make bench`, and its one-line log form. */
import type { ProduceReport } from './load-generator.ts';
import type { RunResults } from './result-collector.ts';
import type { StageFigures } from './stage-metrics.ts';
import type { LatencySummary } from './stats.ts';
import { SUBJECT_LABELS, type SubjectName } from './subjects.ts';

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
  /**
   * The broker's CPU over the same part, per 1,000 commands (NaN when the bench did not start
   * the broker): what the subject's way of committing costs the Kafka cluster. The load
   * generator's and the bench's reading are in it too, the same for every subject.
   */
  readonly brokerCpuMsPerThousandCommands: number;
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
  /** ferry only: its own per-stage figures over the measured part (ferry_pipeline_stage_seconds). */
  readonly stages?: readonly StageFigures[];
  /**
   * Paced runs of ferry and the peer: the first seconds after the system said it was ready
   * (the warm-up, at the same rate, left out of the figures above). What a replica
   * started in a rolling deploy gives the commands that meet it first.
   */
  readonly firstSeconds?: FirstSeconds;
}

/** The commands of a paced run's first seconds after ready, and how long their results took. */
export interface FirstSeconds {
  readonly seconds: number;
  readonly commands: number;
  readonly completed: number;
  /** Command record timestamp until the bench read the result at read_committed. */
  readonly latency: LatencySummary;
}

export function summarise(
  base: Pick<ScenarioFigures, 'subject' | 'kind' | 'latencyMs' | 'ratePerSecond'>,
  results: RunResults,
  produced: ProduceReport,
  measure: {
    readonly seconds: number;
    readonly fromStartSeconds?: number;
    readonly cpuSeconds: number;
    readonly brokerCpuSeconds: number;
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
    brokerCpuMsPerThousandCommands:
      results.completed > 0 ? (measure.brokerCpuSeconds * 1e6) / results.completed : Number.NaN,
    envelopes: measure.envelopes,
    operationsPerEnvelope:
      measure.envelopes > 0 ? measure.operations / measure.envelopes : Number.NaN,
    commandRecords: measure.commandRecords,
    duplicateResults: results.duplicates,
    duplicateSends: measure.duplicateSends,
    peakRssBytes: measure.peakRssBytes,
  };
}

/** The log line of a paced run's first seconds, when it has them. */
export function describeFirstSeconds(f: ScenarioFigures): string | undefined {
  const first = f.firstSeconds;
  if (!first) return undefined;
  return `  first ${first.seconds} s after ready: ${first.completed}/${first.commands}, p50 ${first.latency.p50Ms} p99 ${first.latency.p99Ms} max ${first.latency.maxMs} ms`;
}

export function describe(f: ScenarioFigures): string {
  const what = f.kind === 'backlog' ? 'backlog' : `paced ${f.ratePerSecond}/s`;
  return `  ${SUBJECT_LABELS[f.subject]}, ${f.latencyMs} ms, ${what}: ${f.completed}/${f.commands}${
    f.complete ? '' : ' (not all)'
  } ${Math.round(f.commandsPerSecond)} cmd/s, p50 ${f.latency.p50Ms} p99 ${f.latency.p99Ms} ms, ${f.operationsPerEnvelope.toFixed(
    1,
  )} ops/env, cpu ${f.cpuSeconds.toFixed(2)} s (broker ${Math.round(f.brokerCpuMsPerThousandCommands)} ms per 1,000), peak RSS ${Math.round(f.peakRssBytes / 1048576)} MiB, duplicates ${f.duplicateResults}/${f.duplicateSends}, command records ${f.commandRecords}`;
}
