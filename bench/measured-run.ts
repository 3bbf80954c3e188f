/**
 * One measured run: produce a set of commands to a system under test (ferry or the
 * baseline), wait for every result (or a deadline), and read what it cost.
 */
import type { BenchChild } from './child-process.ts';
import type { BenchCommand } from './command-mix.ts';
import type { LoadGenerator } from './load-generator.ts';
import type { ResultCollector } from './result-collector.ts';
import type { LatencySummary } from './stats.ts';

/** Counters the emulator keeps (GET /__emulator/stats), for envelopes per run. */
export interface GatewayCounts {
  readonly envelopes: number;
  readonly operations: number;
}

/** The emulator as the runs see it: counters and a reset between runs. */
export interface GatewayProbe {
  reset(): Promise<void>;
  counts(): Promise<GatewayCounts>;
}

export interface RunFigures {
  readonly commands: number;
  readonly completed: number;
  readonly succeeded: number;
  /** From the first produce until the last result was read (or the deadline), seconds. */
  readonly elapsedSeconds: number;
  /** False when the deadline came first: throughput is then what was done within it. */
  readonly complete: boolean;
  readonly commandsPerSecond: number;
  /** Rate at which the commands were produced (burst: as fast as the broker took them). */
  readonly producedPerSecond: number;
  /** Result record timestamp minus command record timestamp. */
  readonly latency: LatencySummary;
  /** Command record timestamp until the collector read the committed result. */
  readonly visibleLatency: LatencySummary;
  /** CPU seconds the system under test used during the run. */
  readonly cpuSeconds: number;
  readonly cpuMsPerThousandCommands: number;
  readonly envelopes: number;
  readonly operationsPerEnvelope: number;
}

export interface RunSetup {
  readonly generator: LoadGenerator;
  readonly collector: ResultCollector;
  readonly subject: BenchChild;
  readonly gateway: GatewayProbe;
  readonly topic: string;
}

export type ProduceMode =
  | { readonly kind: 'burst' }
  | { readonly kind: 'paced'; readonly ratePerSecond: number };

/**
 * Produces `commands`, waits for their results until `timeoutMs` after the first
 * produce, and returns the run's figures.
 */
export async function measuredRun(
  setup: RunSetup,
  commands: readonly BenchCommand[],
  mode: ProduceMode,
  timeoutMs: number,
): Promise<RunFigures> {
  const { generator, collector, subject, gateway, topic } = setup;
  await gateway.reset();
  const tracker = collector.track(commands);
  const cpuBefore = subject.usage()?.cpuSeconds ?? Number.NaN;
  const startedAtMs = Date.now();
  const onSent = (chunk: readonly BenchCommand[], at: number) => tracker.sent(chunk, at);
  const produced =
    mode.kind === 'burst'
      ? await generator.burst(topic, commands, onSent)
      : await generator.paced(topic, commands, mode.ratePerSecond, onSent);
  const results = await tracker.until(startedAtMs + timeoutMs);
  const endedAtMs = Date.now();
  const cpuAfter = subject.usage()?.cpuSeconds ?? Number.NaN;
  const counts = await gateway.counts();
  const complete = results.completed === results.expected;
  const lastAtMs = complete ? results.lastResultSeenAtMs : endedAtMs;
  const elapsedSeconds = (lastAtMs - produced.firstProducedAtMs) / 1000;
  const produceSeconds = Math.max(
    0.001,
    (produced.lastAckedAtMs - produced.firstProducedAtMs) / 1000,
  );
  const cpuSeconds = cpuAfter - cpuBefore;
  return {
    commands: results.expected,
    completed: results.completed,
    succeeded: results.succeeded,
    elapsedSeconds,
    complete,
    commandsPerSecond: results.completed / elapsedSeconds,
    producedPerSecond: produced.count / produceSeconds,
    latency: results.latency,
    visibleLatency: results.visibleLatency,
    cpuSeconds,
    cpuMsPerThousandCommands:
      results.completed > 0 ? (cpuSeconds * 1e6) / results.completed : Number.NaN,
    envelopes: counts.envelopes,
    operationsPerEnvelope: counts.envelopes > 0 ? counts.operations / counts.envelopes : Number.NaN,
  };
}
