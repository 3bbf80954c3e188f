/**
 * The metrics of the urgent lane. Counters and histograms add up across lanes; the gauges
 * one lane sets (its envelopes in flight, its commands in doubt, its partitions' ages)
 * would overwrite the other lane's, so the urgent lane's carry `lane="urgent"` and the
 * bulk lane's keep no `lane` label, as before there were lanes.
 */
import type { Gauge } from 'prom-client';
import type { FerryMetrics } from './metrics.ts';

/** The gauges each lane sets for itself. */
export const LANE_GAUGES = [
  'envelopesInFlight',
  'envelopesQueued',
  'consumptionPaused',
  'accessDenied',
  'oldestUncommitted',
  'commandsInDoubt',
  'dedupeIds',
  'awaitingStatus',
] as const satisfies readonly (keyof FerryMetrics)[];

export type LaneName = 'urgent';

/** `metrics` with the lane's gauges labelled `lane`. */
export function laneMetrics(metrics: FerryMetrics, lane: LaneName): FerryMetrics {
  const view: Record<string, unknown> = { ...metrics };
  for (const name of LANE_GAUGES) view[name] = labelled(metrics[name] as Gauge<string>, { lane });
  return view as unknown as FerryMetrics;
}

/** A gauge whose `set` and `remove` add `extra` to the labels they are given. */
function labelled(gauge: Gauge<string>, extra: Record<string, string>): Gauge<string> {
  return new Proxy(gauge, {
    get(target, property, receiver) {
      if (property === 'set') {
        return (labelsOrValue: Record<string, string> | number, value?: number) =>
          typeof labelsOrValue === 'number'
            ? target.set(extra, labelsOrValue)
            : target.set({ ...labelsOrValue, ...extra }, value as number);
      }
      if (property === 'remove') {
        return (labels: Record<string, string>) => target.remove({ ...labels, ...extra });
      }
      const member = Reflect.get(target, property, receiver);
      return typeof member === 'function' ? member.bind(target) : member;
    },
  });
}
