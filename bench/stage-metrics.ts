/**
 * ferry's own view of where a run's time went: `ferry_pipeline_stage_seconds` read from
 * its /metrics before and after the run, and the quantiles of the difference,
 * interpolated within buckets as Prometheus's histogram_quantile does.
 */
import { NO_RUNTIME_READING, parseRuntime, type RuntimeReading } from './runtime-metrics.ts';

/** Per stage: cumulative bucket counts by upper bound (seconds; Infinity for +Inf). */
export type StageBuckets = Map<string, Map<number, number>>;

export interface StageFigures {
  readonly stage: string;
  readonly batches: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
}

const BUCKET_LINE = /^ferry_pipeline_stage_seconds_bucket\{([^}]*)\} (\S+)$/gm;
/** ferry's own end to end (record timestamp to result committed), summed over types as stage `end_to_end`. */
const END_TO_END_LINE = /^ferry_end_to_end_seconds_bucket\{([^}]*)\} (\S+)$/gm;
const LABEL = /(\w+)="([^"]*)"/g;

/** A bucket line's labels, and its upper bound (Infinity for +Inf) when it has one. */
function bucketLabels(match: RegExpMatchArray): { labels: Map<string, string>; bound?: number } {
  const labels = new Map(
    [...(match[1] ?? '').matchAll(LABEL)].map((l) => [l[1] ?? '', l[2] ?? '']),
  );
  const le = labels.get('le');
  if (le === undefined) return { labels };
  return { labels, bound: le === '+Inf' ? Number.POSITIVE_INFINITY : Number(le) };
}

/** @param lane only that lane's batches (`urgent`); undefined: the bulk lane's (no `lane` label). */
export function parseStageBuckets(metricsText: string, lane?: string): StageBuckets {
  const out: StageBuckets = new Map();
  for (const match of metricsText.matchAll(BUCKET_LINE)) {
    const { labels, bound } = bucketLabels(match);
    if (labels.get('lane') !== lane) continue;
    const stage = labels.get('stage');
    if (stage === undefined || bound === undefined) continue;
    let buckets = out.get(stage);
    if (!buckets) {
      buckets = new Map();
      out.set(stage, buckets);
    }
    buckets.set(bound, Number(match[2]));
  }
  const endToEnd = new Map<number, number>();
  for (const match of metricsText.matchAll(END_TO_END_LINE)) {
    const { labels, bound } = bucketLabels(match);
    if (labels.get('lane') !== lane || bound === undefined) continue;
    endToEnd.set(bound, (endToEnd.get(bound) ?? 0) + Number(match[2]));
  }
  if (endToEnd.size > 0) out.set('end_to_end', endToEnd);
  return out;
}

/** The q-quantile in ms of cumulative buckets; NaN without observations. */
export function bucketQuantileMs(q: number, buckets: ReadonlyMap<number, number>): number {
  const bounds = [...buckets.keys()].sort((a, b) => a - b);
  const total = buckets.get(Number.POSITIVE_INFINITY) ?? 0;
  if (total <= 0) return Number.NaN;
  const rank = q * total;
  let lowerBound = 0;
  let lowerCount = 0;
  for (const bound of bounds) {
    const count = buckets.get(bound) ?? 0;
    if (count >= rank) {
      // Past the last finite bucket only its bound is known, as in Prometheus.
      if (bound === Number.POSITIVE_INFINITY) return lowerBound * 1000;
      const share = count === lowerCount ? 1 : (rank - lowerCount) / (count - lowerCount);
      return (lowerBound + (bound - lowerBound) * share) * 1000;
    }
    lowerBound = bound;
    lowerCount = count;
  }
  return Number.NaN;
}

/** Quantiles of what was observed between two readings. */
export function stageFigures(before: StageBuckets, after: StageBuckets): StageFigures[] {
  return [...after].map(([stage, buckets]) => {
    const delta = new Map<number, number>();
    for (const [bound, count] of buckets) {
      delta.set(bound, count - (before.get(stage)?.get(bound) ?? 0));
    }
    return {
      stage,
      batches: delta.get(Number.POSITIVE_INFINITY) ?? 0,
      p50Ms: bucketQuantileMs(0.5, delta),
      p99Ms: bucketQuantileMs(0.99, delta),
    };
  });
}

/** One reading of a ferry's /metrics: its stage buckets (the bulk lane's, and the urgent lane's) and its runtime. */
export interface FerryReading {
  readonly stages: StageBuckets;
  readonly urgentStages: StageBuckets;
  readonly runtime: RuntimeReading;
}

/**
 * Reads a ferry's metrics once (prom-client resets its event-loop delay at every read, so
 * a second read would find it near zero); empty when it does not answer.
 */
export async function readFerryMetrics(metricsUrl: string): Promise<FerryReading> {
  try {
    const text = await (await fetch(metricsUrl)).text();
    return {
      stages: parseStageBuckets(text),
      urgentStages: parseStageBuckets(text, 'urgent'),
      runtime: parseRuntime(text),
    };
  } catch {
    return { stages: new Map(), urgentStages: new Map(), runtime: NO_RUNTIME_READING };
  }
}

export function formatStages(stages: readonly StageFigures[]): string {
  return stages
    .filter((s) => s.batches > 0)
    .map((s) => `${s.stage} ${s.p50Ms.toFixed(1)}/${s.p99Ms.toFixed(1)}`)
    .join(', ');
}
