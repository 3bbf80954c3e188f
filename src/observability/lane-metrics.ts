/**
 * The metrics of the urgent lane. Counters add up across lanes; the gauges one lane sets
 * (its envelopes in flight, its commands in doubt, its partitions' ages) would overwrite
 * the other lane's, so the urgent lane's carry `lane="urgent"` and the bulk lane's keep no
 * `lane` label, as before there were lanes. The latency histograms are labelled the same
 * way: an urgent command's latency is what its lane is for, and mixed into the bulk lane's
 * it would not show; summed without `lane`, they still add up across lanes.
 */
import type { Gauge, Histogram } from 'prom-client';
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

/** The latency histograms each lane observes for itself. */
export const LANE_HISTOGRAMS = [
  'stageDuration',
  'endToEnd',
] as const satisfies readonly (keyof FerryMetrics)[];

export type LaneName = 'urgent';

/** `metrics` with the lane's gauges labelled `lane`. */
export function laneMetrics(metrics: FerryMetrics, lane: LaneName): FerryMetrics {
  const view: Record<string, unknown> = { ...metrics };
  for (const name of LANE_GAUGES) view[name] = labelled(metrics[name] as Gauge<string>, { lane });
  for (const name of LANE_HISTOGRAMS) {
    view[name] = labelledHistogram(metrics[name] as Histogram<string>, { lane });
  }
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

/** A histogram whose `observe` adds `extra` to the labels it is given. */
function labelledHistogram(
  histogram: Histogram<string>,
  extra: Record<string, string>,
): Histogram<string> {
  return new Proxy(histogram, {
    get(target, property, receiver) {
      if (property === 'observe') {
        return (labelsOrValue: Record<string, string> | number, value?: number) =>
          typeof labelsOrValue === 'number'
            ? target.observe(extra, labelsOrValue)
            : target.observe({ ...labelsOrValue, ...extra }, value as number);
      }
      const member = Reflect.get(target, property, receiver);
      return typeof member === 'function' ? member.bind(target) : member;
    },
  });
}
