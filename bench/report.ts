/** The benchmark report: the side-by-side table printed on stdout and the JSON written under .bench/. */
import type { CeilingFigures } from './client-ceilings.ts';
import type { MicroResult } from './micro.ts';
import type { ScenarioFigures } from './scenario-figures.ts';
import { SUBJECT_LABELS } from './subjects.ts';
import { n, type TargetCheck } from './targets.ts';

export { checkTargets, type TargetCheck } from './targets.ts';

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

/** a ÷ b as the ratio rows print it, '-' when b is not positive. */
function ratio(a: number, b: number): string {
  return b > 0 ? `${n(a / b, 2)}x` : '-';
}

/** A paced run's first seconds after ready: its latencies, and the share answered when not all. */
function firstSecondsRow(first: string, f: ScenarioFigures): string | undefined {
  const s = f.firstSeconds;
  if (!s) return undefined;
  const l = s.latency;
  const done = s.completed === s.commands ? '' : `${Math.round((100 * s.completed) / s.commands)}%`;
  return row([
    first,
    SUBJECT_LABELS[f.subject],
    '-',
    n(l.p50Ms),
    n(l.p95Ms),
    n(l.p99Ms),
    n(l.maxMs),
    '-',
    '-',
    '-',
    '-',
    '-',
    done,
  ]);
}

/** ferry ÷ peer of the first seconds' latencies. */
function firstSecondsRatioRow(ferry: ScenarioFigures, peer: ScenarioFigures): string | undefined {
  const [f, p] = [ferry.firstSeconds?.latency, peer.firstSeconds?.latency];
  if (!f || !p) return undefined;
  return row([
    '',
    'ferry ÷ peer',
    '',
    ratio(f.p50Ms, p.p50Ms),
    ratio(f.p95Ms, p.p95Ms),
    ratio(f.p99Ms, p.p99Ms),
    ratio(f.maxMs, p.maxMs),
    '',
    '',
    '',
    '',
    '',
    '',
  ]);
}

/** ferry ÷ peer of each column: above 1 is better for cmd/s, below 1 better for the rest. */
function ratioRow(ferry: ScenarioFigures, peer: ScenarioFigures, label = 'ferry ÷ peer'): string {
  return row([
    '',
    label,
    ratio(ferry.commandsPerSecond, peer.commandsPerSecond),
    ratio(ferry.latency.p50Ms, peer.latency.p50Ms),
    ratio(ferry.latency.p95Ms, peer.latency.p95Ms),
    ratio(ferry.latency.p99Ms, peer.latency.p99Ms),
    ratio(ferry.latency.maxMs, peer.latency.maxMs),
    ratio(ferry.cpuMsPerThousandCommands, peer.cpuMsPerThousandCommands),
    ratio(ferry.brokerCpuMsPerThousandCommands, peer.brokerCpuMsPerThousandCommands),
    '',
    ratio(ferry.peakRssBytes, peer.peakRssBytes),
    ferry.fromStartSeconds === undefined
      ? ''
      : ratio(ferry.fromStartSeconds, peer.fromStartSeconds ?? 0),
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
    "RSS: the process's peak (VmHWM) in the scenario; start s: process start to last result; first N s after ready: a paced run's warm-up, left out of the row above it;",
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
    const withFirst = g.rows.filter((f) => f.firstSeconds);
    withFirst.forEach((f, i) => {
      const label = i === 0 ? `  first ${f.firstSeconds?.seconds} s after ready` : '';
      const line = firstSecondsRow(label, f);
      if (line) out.push(line);
    });
    const firstRatio = ferry && peer ? firstSecondsRatioRow(ferry, peer) : undefined;
    if (firstRatio) out.push(firstRatio);
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
