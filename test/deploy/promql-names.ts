/**
 * The metric names a PromQL expression reads, for checking the dashboard and the
 * alerts against ferry's registry. Not a full PromQL parser: it removes what cannot
 * be a metric name (strings, label matchers, ranges, grouping label lists, function
 * and operator names, keywords) and keeps the identifiers left.
 */
import type { Registry } from 'prom-client';

const KEYWORDS = new Set([
  'and',
  'or',
  'unless',
  'bool',
  'offset',
  'inf',
  'nan',
  'group_left',
  'group_right',
]);
const GROUPING = /\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g;

/** Metric names read by `expr`, sorted and without duplicates. */
export function metricNamesIn(expr: string): string[] {
  const stripped = expr
    .replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`/g, ' ')
    .replace(/\{[^}]*\}/g, ' ')
    .replace(/\[[^\]]*\]/g, ' ')
    .replace(GROUPING, ' ')
    .replace(/\$\w+/g, ' ');
  const names = new Set<string>();
  for (const match of stripped.matchAll(/(?<![\w:.$])([a-zA-Z_:][\w:]*)(\s*\()?/g)) {
    const [, name, call] = match;
    if (name === undefined || call !== undefined) continue;
    if (KEYWORDS.has(name.toLowerCase())) continue;
    names.add(name);
  }
  return [...names].sort();
}

/** Names Prometheus itself adds to every scrape; not in ferry's registry. */
export const PROMETHEUS_SERIES = new Set([
  'up',
  'scrape_duration_seconds',
  'scrape_samples_scraped',
]);

/**
 * The names in `names` that a scrape of `registry` would not expose, taking histogram
 * (`_bucket`, `_sum`, `_count`) and summary series into account.
 */
export async function unknownMetricNames(
  registry: Registry,
  names: Iterable<string>,
): Promise<string[]> {
  const exposed = new Set<string>();
  for (const metric of await registry.getMetricsAsJSON()) {
    exposed.add(metric.name);
    const type = String(metric.type);
    if (type === 'histogram') {
      for (const suffix of ['_bucket', '_sum', '_count']) exposed.add(metric.name + suffix);
    } else if (type === 'summary') {
      for (const suffix of ['_sum', '_count']) exposed.add(metric.name + suffix);
    }
  }
  return [...names].filter((name) => !exposed.has(name) && !PROMETHEUS_SERIES.has(name));
}
