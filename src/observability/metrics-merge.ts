/**
 * One `/metrics` for the process: the main thread's registry with another thread's
 * (the urgent lane's worker thread has a registry of its own). Series both threads write with the same
 * labels (envelopes sent, gateway requests) are added up; the lane's gauges carry
 * `lane="urgent"` and so stay series of their own. Metrics only one side has (the
 * process and Node.js metrics, from the main thread) pass through as they are.
 */
import { Registry } from 'prom-client';

export type MetricJson = Awaited<ReturnType<Registry['getMetricsAsJSON']>>[number];
type Value = MetricJson['values'][number] & { metricName?: string };

function seriesKey(value: Value): string {
  const labels = Object.entries(value.labels).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `${value.metricName ?? ''}\u0000${JSON.stringify(labels)}`;
}

/** `a` and `b`'s series of one metric, those with the same name and labels added up. */
function sumSeries(a: MetricJson, b: MetricJson): MetricJson {
  const byKey = new Map<string, Value>();
  for (const value of [...a.values, ...b.values] as Value[]) {
    const key = seriesKey(value);
    const seen = byKey.get(key);
    byKey.set(key, seen ? { ...seen, value: seen.value + value.value } : { ...value });
  }
  return { ...a, values: [...byKey.values()] };
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
    merged.push(other ? sumSeries(metric, other) : metric);
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
