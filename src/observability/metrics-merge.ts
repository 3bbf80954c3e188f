/**
 * One `/metrics` for the process: the main thread's registry with another thread's
 * (the urgent lane's worker thread has a registry of its own). Series both threads write with the same
 * labels (envelopes sent, gateway requests) are added up when they count (counters,
 * histograms); a gauge series both have is the main thread's (the lane's gauges carry
 * `lane="urgent"` and so are series of their own; an unlabelled one in the lane's registry,
 * such as `ferry_build_info`, only repeats the main thread's). Metrics only one side has
 * (the process and Node.js metrics, from the main thread) pass through as they are.
 */
import { Registry } from 'prom-client';

export type MetricJson = Awaited<ReturnType<Registry['getMetricsAsJSON']>>[number];
type Value = MetricJson['values'][number] & { metricName?: string };

function seriesKey(value: Value): string {
  const labels = Object.entries(value.labels).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `${value.metricName ?? ''}\u0000${JSON.stringify(labels)}`;
}

/**
 * `main` and `lane`'s series of one metric: those with the same name and labels added up,
 * or for a gauge, main's kept.
 */
function mergeSeries(main: MetricJson, lane: MetricJson): MetricJson {
  // prom-client types `type` as an enum; at run time it is the text ('gauge').
  const add = String(main.type) !== 'gauge';
  const byKey = new Map<string, Value>();
  for (const value of [...main.values, ...lane.values] as Value[]) {
    const key = seriesKey(value);
    const seen = byKey.get(key);
    if (!seen) byKey.set(key, { ...value });
    else if (add) byKey.set(key, { ...seen, value: seen.value + value.value });
  }
  return { ...main, values: [...byKey.values()] };
}

export function mergeMetrics(
  main: readonly MetricJson[],
  lane: readonly MetricJson[],
): MetricJson[] {
  const laneByName = new Map(lane.map((metric) => [metric.name, metric]));
  const merged: MetricJson[] = [];
  for (const metric of main) {
    const other = laneByName.get(metric.name);
    laneByName.delete(metric.name);
    merged.push(other ? mergeSeries(metric, other) : metric);
  }
  merged.push(...laneByName.values());
  return merged;
}

/** The Prometheus text of `metrics`. */
export async function metricsText(metrics: readonly MetricJson[]): Promise<string> {
  const registry = new Registry();
  for (const metric of metrics) {
    registry.registerMetric({ ...metric, get: () => metric } as unknown as Parameters<
      Registry['registerMetric']
    >[0]);
  }
  return await registry.metrics();
}
