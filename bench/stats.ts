/** Small statistics helpers for the benchmark: percentiles and medians of plain numbers. */

/**
 * The `q`-quantile (0..1) of `sorted` by the nearest-rank method; NaN when empty.
 * `sorted` must be ascending (sorting is left to the caller, who sorts once for many quantiles).
 */
export function quantile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.ceil(q * sorted.length);
  const index = Math.min(sorted.length - 1, Math.max(0, rank - 1));
  return sorted[index] ?? Number.NaN;
}

/** The median of `values` (mean of the two middle ones for an even count); NaN when empty. */
export function median(values: readonly number[]): number {
  const finite = values.filter((v) => Number.isFinite(v)).sort((a, b) => a - b);
  if (finite.length === 0) return Number.NaN;
  const middle = Math.floor(finite.length / 2);
  if (finite.length % 2 === 1) return finite[middle] ?? Number.NaN;
  return ((finite[middle - 1] ?? 0) + (finite[middle] ?? 0)) / 2;
}

/** Latency percentiles in milliseconds. */
export interface LatencySummary {
  readonly count: number;
  readonly p50Ms: number;
  readonly p95Ms: number;
  readonly p99Ms: number;
  readonly maxMs: number;
}

/** Summarises latencies (milliseconds, any order); the array is sorted in place. */
export function summariseLatencies(latenciesMs: number[]): LatencySummary {
  latenciesMs.sort((a, b) => a - b);
  return {
    count: latenciesMs.length,
    p50Ms: quantile(latenciesMs, 0.5),
    p95Ms: quantile(latenciesMs, 0.95),
    p99Ms: quantile(latenciesMs, 0.99),
    maxMs:
      latenciesMs.length > 0 ? (latenciesMs[latenciesMs.length - 1] ?? Number.NaN) : Number.NaN,
  };
}
