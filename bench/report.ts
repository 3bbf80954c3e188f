/** The benchmark report: the side-by-side table printed on stdout and the JSON written under .bench/. */
import type { CeilingFigures } from './client-ceilings.ts';
import type { MicroResult } from './micro.ts';
import type { ScenarioFigures } from './scenario-figures.ts';
import { SUBJECT_LABELS } from './subjects.ts';

export interface TargetCheck {
  readonly name: string;
  readonly target: string;
  readonly measured: string;
  readonly met: boolean;
}

export interface BenchReport {
  readonly meta: {
    readonly date: string;
    readonly commit: string;
    readonly node: string;
    readonly cpus: number;
    readonly cpuModel: string;
    readonly quick: boolean;
    /** `redpanda-connect --version` of the peer measured. */
    readonly peerVersion: string;
    readonly options: Record<string, unknown>;
  };
  readonly micro: readonly MicroResult[];
  readonly scenarios: readonly ScenarioFigures[];
  readonly targets: readonly TargetCheck[];
  readonly ceilings?: CeilingFigures;
  readonly durationSeconds: number;
}

const MIB = 1024 * 1024;

function n(value: number | undefined, digits = 0): string {
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
      const p50 = peer.latency.p50Ms + PACED_P50_MARGIN_MS;
      const p99 = peer.latency.p99Ms + PACED_P99_MARGIN_MS;
      checks.push({
        name: `paced p50, ${where}`,
        target: `<= peer + ${PACED_P50_MARGIN_MS} = ${n(p50)} ms`,
        measured: `${n(f.latency.p50Ms)} ms`,
        met: complete && f.latency.p50Ms <= p50,
      });
      checks.push({
        name: `paced p99, ${where}`,
        target: `<= peer + ${PACED_P99_MARGIN_MS} = ${n(p99)} ms`,
        measured: `${n(f.latency.p99Ms)} ms`,
        met: complete && f.latency.p99Ms <= p99,
      });
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

const WIDTHS = [24, 17, 9, 7, 7, 7, 7, 9, 10, 8, 8, 7, 9];

function row(cells: readonly string[]): string {
  return cells
    .map((cell, i) => (i <= 1 ? cell.padEnd(WIDTHS[i] ?? 0) : cell.padStart(WIDTHS[i] ?? 0)))
    .join(' ');
}

function figuresRow(first: string, f: ScenarioFigures): string {
  return row([
    first,
    SUBJECT_LABELS[f.subject],
    n(f.commandsPerSecond),
    n(f.latency.p50Ms),
    n(f.latency.p95Ms),
    n(f.latency.p99Ms),
    n(f.latency.maxMs),
    n(f.cpuMsPerThousandCommands),
    n(f.brokerCpuMsPerThousandCommands),
    n(f.operationsPerEnvelope, 1),
    n(f.peakRssBytes / MIB),
    n(f.fromStartSeconds, 1),
    [
      f.complete ? '' : `${Math.round((100 * f.completed) / f.commands)}%`,
      f.duplicateResults > 0 ? `dup ${f.duplicateResults}` : '',
      f.commandRecords > f.commands ? `(in ${f.commandRecords - f.commands})` : '',
    ]
      .filter((s) => s !== '')
      .join(' '),
  ]);
}

/** ferry ÷ peer of each column: above 1 is better for cmd/s, below 1 better for the rest. */
function ratioRow(ferry: ScenarioFigures, peer: ScenarioFigures, label = 'ferry ÷ peer'): string {
  const r = (a: number, b: number) => (b > 0 ? `${n(a / b, 2)}x` : '-');
  return row([
    '',
    label,
    r(ferry.commandsPerSecond, peer.commandsPerSecond),
    r(ferry.latency.p50Ms, peer.latency.p50Ms),
    r(ferry.latency.p95Ms, peer.latency.p95Ms),
    r(ferry.latency.p99Ms, peer.latency.p99Ms),
    r(ferry.latency.maxMs, peer.latency.maxMs),
    r(ferry.cpuMsPerThousandCommands, peer.cpuMsPerThousandCommands),
    r(ferry.brokerCpuMsPerThousandCommands, peer.brokerCpuMsPerThousandCommands),
    '',
    r(ferry.peakRssBytes, peer.peakRssBytes),
    ferry.fromStartSeconds === undefined
      ? ''
      : r(ferry.fromStartSeconds, peer.fromStartSeconds ?? 0),
    '',
  ]);
}

export function formatReport(report: BenchReport): string {
  const out: string[] = [];
  const m = report.meta;
  out.push(
    `ferry side by side — ${m.date} — commit ${m.commit} — node ${m.node} — ${m.cpus} CPUs (${m.cpuModel})`,
  );
  out.push(`peer: Redpanda Connect ${m.peerVersion} (bench/peer/redpanda-connect.yaml)`);
  out.push(
    'Latency ms: command produced until the bench read the result at read_committed. Backlog cmd/s: first to last result read.',
  );
  out.push(
    "cpu ms/1k: CPU of the process per 1,000 commands; broker/1k: the broker's CPU over the same part per 1,000 commands (the bench's own producing and reading included, alike for all);",
  );
  out.push(
    "RSS: the process's peak (VmHWM) in the scenario; start s: process start to last result;",
  );
  out.push(
    'done: share of the commands answered when not all (window or deadline); dup N: second results for a command, (in M): commands written twice by the bench;',
  );
  out.push('ratio rows: ferry ÷ Redpanda Connect, column by column.');
  out.push('');
  out.push(
    row([
      'scenario',
      'system',
      'cmd/s',
      'p50',
      'p95',
      'p99',
      'max',
      'cpu ms/1k',
      'broker/1k',
      'ops/env',
      'RSS MiB',
      'start s',
      'done',
    ]),
  );
  const groups: { key: string; label: string; rows: ScenarioFigures[] }[] = [];
  for (const f of report.scenarios) {
    const key = `${f.latencyMs}/${f.kind}/${f.ratePerSecond ?? ''}`;
    let group = groups.find((g) => g.key === key);
    if (!group) {
      const load =
        f.kind === 'backlog' ? `backlog ${n(f.commands)}` : `paced ${n(f.ratePerSecond)}/s`;
      group = { key, label: `${f.latencyMs} ms, ${load}`, rows: [] };
      groups.push(group);
    }
    group.rows.push(f);
  }
  for (const g of groups) {
    g.rows.forEach((f, i) => {
      out.push(figuresRow(i === 0 ? g.label : '', f));
    });
    const ferry = g.rows.find((f) => f.subject === 'ferry');
    const peer = g.rows.find((f) => f.subject === 'peer');
    if (ferry && peer) out.push(ratioRow(ferry, peer));
    const before = g.rows.find((f) => f.subject === 'ferry-before');
    if (ferry && before) out.push(ratioRow(ferry, before, 'ferry ÷ before'));
  }
  out.push('');
  out.push('targets (ferry)');
  for (const t of report.targets) {
    out.push(
      `  ${t.met ? 'met   ' : 'MISSED'}  ${t.name.padEnd(40)} target ${t.target.padEnd(10)} measured ${t.measured}`,
    );
  }
  if (report.ceilings) {
    out.push('');
    out.push(
      'client ceilings (records/s, or transactions/s where named; one client alone on this broker)',
    );
    for (const c of report.ceilings.rows) {
      out.push(`  ${c.name.padEnd(56)} ${n(c.recordsPerSecond).padStart(10)}  ${c.note}`);
    }
  }
  out.push('');
  out.push('micro-benchmarks (median of rounds)                 ops/s        items/s');
  for (const mb of report.micro) {
    out.push(
      `  ${mb.name.padEnd(46)} ${n(mb.opsPerSecond).padStart(12)} ${n(mb.opsPerSecond * mb.itemsPerOp).padStart(14)}`,
    );
  }
  out.push('');
  out.push(`total ${n(report.durationSeconds)} s`);
  return out.join('\n');
}
