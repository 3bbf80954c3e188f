/**
 * ferry's targets in `make bench` (docs/benchmarks.md), each checked against the peer
 * measured in the same run, so the machine's speed cancels out; the memory bound alone
 * is absolute.
 */
import type { ScenarioFigures } from './scenario-figures.ts';
import type { LatencySummary } from './stats.ts';

export interface TargetCheck {
  readonly name: string;
  readonly target: string;
  readonly measured: string;
  readonly met: boolean;
}

const MIB = 1024 * 1024;

/** A figure as the report prints it: thousands separated, '-' when not a number. */
export function n(value: number | undefined, digits = 0): string {
  if (value === undefined || !Number.isFinite(value)) return '-';
  return value.toLocaleString('en-US', {
    maximumFractionDigits: digits,
    minimumFractionDigits: digits,
  });
}

function find(
  scenarios: readonly ScenarioFigures[],
  subject: ScenarioFigures['subject'],
  kind: ScenarioFigures['kind'],
  latencyMs: number,
  ratePerSecond?: number,
): ScenarioFigures | undefined {
  return scenarios.find(
    (s) =>
      s.subject === subject &&
      s.kind === kind &&
      s.latencyMs === latencyMs &&
      s.ratePerSecond === ratePerSecond,
  );
}

/** Backlog throughput ferry ÷ peer that each latency must reach (at least). */
const BACKLOG_RATIO_TARGET = 1.25;
/** Paced latency: ferry's p50 and p99 at most the peer's in the same run plus these, ms. */
const PACED_P50_MARGIN_MS = 15;
const PACED_P99_MARGIN_MS = 40;
const FERRY_PEAK_RSS_TARGET_BYTES = 128 * MIB;

/**
 * Checks ferry against its targets (docs/benchmarks.md) in the scenarios measured: every
 * target is against the peer measured in the same run (so the machine's speed cancels
 * out), except the memory bound. Without a peer run, only the memory bound is checked.
 */
export function checkTargets(scenarios: readonly ScenarioFigures[]): TargetCheck[] {
  const checks: TargetCheck[] = [];
  for (const f of scenarios) {
    if (f.subject !== 'ferry') continue;
    const peer = find(scenarios, 'peer', f.kind, f.latencyMs, f.ratePerSecond);
    if (!peer) continue;
    const where =
      f.kind === 'paced'
        ? `${f.latencyMs} ms, ${n(f.ratePerSecond)}/s`
        : `${f.latencyMs} ms, backlog`;
    const complete = f.complete && peer.complete;
    if (f.kind === 'backlog') {
      const ratio = f.commandsPerSecond / peer.commandsPerSecond;
      checks.push({
        name: `backlog ferry / redpanda-connect, ${f.latencyMs} ms`,
        target: `>= ${BACKLOG_RATIO_TARGET.toFixed(2)}x`,
        measured: `${n(ratio, 2)}x`,
        met: complete && ratio >= BACKLOG_RATIO_TARGET,
      });
    } else {
      checks.push(...latencyChecks(`paced`, where, f.latency, peer.latency, complete));
      const [first, peerFirst] = [f.firstSeconds, peer.firstSeconds];
      if (first && peerFirst) {
        const bothComplete =
          first.completed === first.commands && peerFirst.completed === peerFirst.commands;
        checks.push(
          ...latencyChecks(
            `first ${first.seconds} s`,
            where,
            first.latency,
            peerFirst.latency,
            bothComplete,
          ),
        );
      }
    }
    checks.push({
      name: `cpu per 1k commands, ${where}`,
      target: `<= peer's ${n(peer.cpuMsPerThousandCommands)} ms`,
      measured: `${n(f.cpuMsPerThousandCommands)} ms`,
      met: complete && f.cpuMsPerThousandCommands <= peer.cpuMsPerThousandCommands,
    });
  }
  const ferryRuns = scenarios.filter((s) => s.subject === 'ferry');
  if (ferryRuns.length > 0) {
    const peak = Math.max(...ferryRuns.map((s) => s.peakRssBytes));
    checks.push({
      name: 'ferry peak RSS, any scenario',
      target: `<= ${FERRY_PEAK_RSS_TARGET_BYTES / MIB} MiB`,
      measured: `${n(peak / MIB)} MiB`,
      met: peak <= FERRY_PEAK_RSS_TARGET_BYTES,
    });
  }
  return checks;
}

/** p50 ≤ the peer's + 15 ms and p99 ≤ the peer's + 40 ms, named `<what> p50, <where>`. */
function latencyChecks(
  what: string,
  where: string,
  ferry: LatencySummary,
  peer: LatencySummary,
  complete: boolean,
): TargetCheck[] {
  const p50 = peer.p50Ms + PACED_P50_MARGIN_MS;
  const p99 = peer.p99Ms + PACED_P99_MARGIN_MS;
  return [
    {
      name: `${what} p50, ${where}`,
      target: `<= peer + ${PACED_P50_MARGIN_MS} = ${n(p50)} ms`,
      measured: `${n(ferry.p50Ms)} ms`,
      met: complete && ferry.p50Ms <= p50,
    },
    {
      name: `${what} p99, ${where}`,
      target: `<= peer + ${PACED_P99_MARGIN_MS} = ${n(p99)} ms`,
      measured: `${n(ferry.p99Ms)} ms`,
      met: complete && ferry.p99Ms <= p99,
    },
  ];
}
