/**
 * The metrics of duplicate suppression (src/pipeline/dedupe.ts), created with the rest of
 * ferry's metrics on the same registry.
 */
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';

export interface DedupeMetrics {
  /** `ferry_duplicates_total{source}`: commands not sent because their id was handled before (`committed`) or was on its way (`in_flight`). */
  readonly duplicates: Counter<'source'>;
  /** `ferry_dedupe_ids{partition}`: completed ids kept for a partition this replica owns. */
  readonly dedupeIds: Gauge<'partition' | 'lane'>;
  /** `ferry_dedupe_restore_seconds`: reading a partition's dedupe records back at a takeover. */
  readonly dedupeRestoreDuration: Histogram;
  /** `ferry_dedupe_unkeyed_commands_total`: commands without a record key, whose copies may land on another partition and be sent. */
  readonly dedupeUnkeyed: Counter;
}

export const DEDUPE_RESTORE_BUCKETS_SECONDS: readonly number[] = [
  0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60,
];

export function createDedupeMetrics(registry: Registry): DedupeMetrics {
  const registers = [registry];
  const metrics: DedupeMetrics = {
    duplicates: new Counter({
      name: 'ferry_duplicates_total',
      help: 'Commands not sent because an earlier command with their id reached the gateway (committed) or was on its way (in_flight).',
      labelNames: ['source'] as const,
      registers,
    }),
    dedupeIds: new Gauge({
      name: 'ferry_dedupe_ids',
      help: 'Completed command ids kept for duplicate suppression, per partition owned here.',
      labelNames: ['partition', 'lane'] as const,
      registers,
    }),
    dedupeRestoreDuration: new Histogram({
      name: 'ferry_dedupe_restore_seconds',
      help: "Time to read a partition's dedupe records back at a takeover.",
      buckets: [...DEDUPE_RESTORE_BUCKETS_SECONDS],
      registers,
    }),
    dedupeUnkeyed: new Counter({
      name: 'ferry_dedupe_unkeyed_commands_total',
      help: 'Commands without a record key: their copies may land on another partition, where they are not recognised.',
      registers,
    }),
  };
  for (const source of ['committed', 'in_flight']) metrics.duplicates.inc({ source }, 0);
  metrics.dedupeUnkeyed.inc(0);
  return metrics;
}
