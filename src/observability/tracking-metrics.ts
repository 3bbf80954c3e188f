/**
 * The metrics of final status tracking (src/tracking/), created with the rest of ferry's
 * metrics on the same registry.
 */
import { Counter, Gauge, type Registry } from 'prom-client';

export interface TrackingMetrics {
  /** `ferry_final_statuses_total{source}`: final status events written, by how the status was learned. */
  readonly finalStatuses: Counter<'source'>;
  /** `ferry_messages_awaiting_status{partition}`: sent messages without a final status yet, per partition owned here. */
  readonly awaitingStatus: Gauge<'partition' | 'lane'>;
  /** `ferry_status_polls_total{outcome}`: messages ferry asked the gateway about: `final`, `not_final`, `failed`. */
  readonly statusPolls: Counter<'outcome'>;
}

export function createTrackingMetrics(registry: Registry): TrackingMetrics {
  const registers = [registry];
  const metrics: TrackingMetrics = {
    finalStatuses: new Counter({
      name: 'ferry_final_statuses_total',
      help: 'Final status events written, one per message sent: from a callback, a status lookup (poll) or given up (give_up).',
      labelNames: ['source'] as const,
      registers,
    }),
    awaitingStatus: new Gauge({
      name: 'ferry_messages_awaiting_status',
      help: 'Messages sent without a final status yet, per command partition owned here.',
      labelNames: ['partition', 'lane'] as const,
      registers,
    }),
    statusPolls: new Counter({
      name: 'ferry_status_polls_total',
      help: 'Messages whose status ferry asked the gateway because no callback came: final, not_final, or failed (asked again later).',
      labelNames: ['outcome'] as const,
      registers,
    }),
  };
  for (const source of ['callback', 'poll', 'give_up']) metrics.finalStatuses.inc({ source }, 0);
  for (const outcome of ['final', 'not_final', 'failed']) metrics.statusPolls.inc({ outcome }, 0);
  return metrics;
}
