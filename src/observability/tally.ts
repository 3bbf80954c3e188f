import type { Counter } from 'prom-client';

/**
 * Adds one to `counter` for each label set, aggregated first: prom-client hashes
 * the labels on every `inc`, so a batch of thousands of commands costs one call
 * per distinct label set instead of one per command.
 */
export function incEach<L extends string>(
  counter: Counter<L>,
  labelSets: Iterable<Readonly<Record<L, string>>>,
): void {
  const counts = new Map<string, { labels: Readonly<Record<L, string>>; count: number }>();
  for (const labels of labelSets) {
    const key = Object.values<string>(labels).join('\u0000');
    const entry = counts.get(key);
    if (entry) entry.count += 1;
    else counts.set(key, { labels, count: 1 });
  }
  for (const { labels, count } of counts.values()) counter.inc(labels, count);
}
