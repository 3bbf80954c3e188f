/** The benchmark report: the table printed on stdout and the JSON written under .bench/. */
import type { MicroResult } from './micro.ts';
import type { BaselineScenario, FerryScenario, MedianFigures } from './scenarios.ts';

export interface ScenarioReport {
  readonly latencyMs: number;
  readonly ferry: FerryScenario;
  readonly baseline: BaselineScenario;
  /** Median ferry throughput / median baseline throughput. */
  readonly ratio: number;
}

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
    readonly options: Record<string, unknown>;
  };
  readonly micro: readonly MicroResult[];
  readonly scenarios: readonly ScenarioReport[];
  readonly targets: readonly TargetCheck[];
  readonly durationSeconds: number;
}

const MIB = 1024 * 1024;

function n(value: number, digits = 0): string {
  if (!Number.isFinite(value)) return '-';
  return value.toLocaleString('en-US', {
    maximumFractionDigits: digits,
    minimumFractionDigits: digits,
  });
}

/** Checks the four performance targets (docs/benchmarks.md) against the scenarios measured. */
export function checkTargets(scenarios: readonly ScenarioReport[]): TargetCheck[] {
  const checks: TargetCheck[] = [];
  const at0 = scenarios.find((s) => s.latencyMs === 0);
  if (at0) {
    const rate = at0.ferry.median.commandsPerSecond;
    checks.push({
      name: 'throughput at 0 ms',
      target: '>= 30,000 cmd/s',
      measured: `${n(rate)} cmd/s`,
      met: rate >= 30_000,
    });
  }
  const at50 = scenarios.find((s) => s.latencyMs === 50);
  if (at50) {
    checks.push({
      name: 'ferry / baseline at 50 ms',
      target: '>= 100x',
      measured: `${n(at50.ratio, 1)}x`,
      met: at50.ratio >= 100,
    });
  }
  for (const s of scenarios) {
    const { run, p99TargetMs } = s.ferry.halfRate;
    checks.push({
      name: `p99 at half max rate, ${s.latencyMs} ms`,
      target: `<= ${p99TargetMs} ms`,
      measured: `${n(run.latency.p99Ms)} ms`,
      met: run.complete && run.latency.p99Ms <= p99TargetMs,
    });
    checks.push({
      name: `p99 seen committed, half rate, ${s.latencyMs} ms`,
      target: `<= ${p99TargetMs} ms`,
      measured: `${n(run.visibleLatency.p99Ms)} ms`,
      met: run.complete && run.visibleLatency.p99Ms <= p99TargetMs,
    });
  }
  const peak = Math.max(...scenarios.map((s) => s.ferry.peakRssBytes));
  checks.push({
    name: 'ferry peak RSS',
    target: '<= 256 MiB',
    measured: `${n(peak / MIB)} MiB`,
    met: peak <= 256 * MIB,
  });
  return checks;
}

function row(cells: readonly string[], widths: readonly number[]): string {
  return cells
    .map((cell, i) => (i === 0 ? cell.padEnd(widths[i] ?? 0) : cell.padStart(widths[i] ?? 0)))
    .join('  ');
}

/** The human-readable table. */
/** A table row of median figures (ferry's bursts and the baseline share the shape). */
function medianRow(
  label: string,
  f: MedianFigures,
  peakRssBytes: number,
  widths: readonly number[],
): string {
  return row(
    [
      label,
      n(f.commandsPerSecond),
      n(f.p50Ms),
      n(f.p95Ms),
      n(f.p99Ms),
      n(f.maxMs),
      n(f.p99VisibleMs),
      n(f.cpuMsPerThousandCommands),
      n(f.operationsPerEnvelope, 1),
      n(peakRssBytes / MIB),
    ],
    widths,
  );
}

export function formatReport(report: BenchReport): string {
  const out: string[] = [];
  out.push(
    `ferry benchmark — ${report.meta.date} — commit ${report.meta.commit} — node ${report.meta.node} — ${report.meta.cpus} CPUs (${report.meta.cpuModel})`,
  );
  out.push(
    'Medians over runs. Latency: result record timestamp - command record timestamp; "p99 seen": until the committed result was read.',
  );
  out.push('');
  const widths = [34, 10, 8, 8, 8, 8, 10, 10, 8, 8];
  out.push(
    row(
      [
        'scenario',
        'cmd/s',
        'p50 ms',
        'p95 ms',
        'p99 ms',
        'max ms',
        'p99 seen',
        'cpu ms/1k',
        'ops/env',
        'RSS MiB',
      ],
      widths,
    ),
  );
  for (const s of report.scenarios) {
    const f = s.ferry.median;
    const b = s.baseline.median;
    out.push(medianRow(`ferry, ${s.latencyMs} ms, burst`, f, s.ferry.peakRssBytes, widths));
    const h = s.ferry.halfRate.run;
    out.push(
      row(
        [
          `ferry, ${s.latencyMs} ms, paced ${n(s.ferry.halfRate.targetRatePerSecond)}/s`,
          n(h.commandsPerSecond),
          n(h.latency.p50Ms),
          n(h.latency.p95Ms),
          n(h.latency.p99Ms),
          n(h.latency.maxMs),
          n(h.visibleLatency.p99Ms),
          n(h.cpuMsPerThousandCommands),
          n(h.operationsPerEnvelope, 1),
          '',
        ],
        widths,
      ),
    );
    out.push(
      medianRow(
        `baseline, ${s.latencyMs} ms (${s.baseline.windowSeconds} s window)`,
        b,
        s.baseline.peakRssBytes,
        widths,
      ),
    );
    out.push(`  ratio ferry / baseline at ${s.latencyMs} ms: ${n(s.ratio, 1)}x`);
  }
  out.push('');
  out.push('targets');
  for (const t of report.targets) {
    out.push(
      `  ${t.met ? 'met   ' : 'MISSED'}  ${t.name.padEnd(40)} target ${t.target.padEnd(16)} measured ${t.measured}`,
    );
  }
  out.push('');
  out.push('micro-benchmarks (median of rounds)                 ops/s        items/s');
  for (const m of report.micro) {
    out.push(
      `  ${m.name.padEnd(46)} ${n(m.opsPerSecond).padStart(12)} ${n(m.opsPerSecond * m.itemsPerOp).padStart(14)}`,
    );
  }
  out.push('');
  out.push(`total ${n(report.durationSeconds)} s`);
  return out.join('\n');
}
