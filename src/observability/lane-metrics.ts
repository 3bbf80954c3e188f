/**
 * The metrics of the urgent lane. Counters add up across lanes; the gauges one lane sets
 * (its envelopes in flight, its commands in doubt, its partitions' ages) would overwrite
 * the other lane's, so the urgent lane's carry `lane="urgent"` and the bulk lane's keep no
 * `lane` label, as before there were lanes. The latency histograms are labelled the same
 * way: an urgent command's latency is what its lane is for, and mixed into the bulk lane's
 * it would not show; summed without `lane`, they still add up across lanes.
 */
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

/** `metrics` with the lane's gauges and latency histograms labelled `lane`. */
export function laneMetrics(metrics: FerryMetrics, lane: LaneName): FerryMetrics {
  const view: Record<string, unknown> = { ...metrics };
  const extra = { lane };
  for (const name of LANE_GAUGES) view[name] = labelled(metrics[name], extra, ['set'], ['remove']);
  for (const name of LANE_HISTOGRAMS) view[name] = labelled(metrics[name], extra, ['observe'], []);
  return view as unknown as FerryMetrics;
}

type Labels = Record<string, string>;

/**
 * `metric` with `extra` added to the labels its methods are given: `valued` methods take
 * (labels, value) or (value) as prom-client's `set` and `observe` do, `labelOnly` ones
 * take labels alone (`remove`). Everything else is the metric's own.
 */
function labelled<M extends object>(
  metric: M,
  extra: Labels,
  valued: readonly string[],
  labelOnly: readonly string[],
): M {
  return new Proxy(metric, {
    get(target, property, receiver) {
      const member = Reflect.get(target, property, receiver) as unknown;
      if (typeof member !== 'function') return member;
      const call = member as (...args: unknown[]) => unknown;
      if (typeof property === 'string' && valued.includes(property)) {
        return (labelsOrValue: Labels | number, value?: number) =>
          typeof labelsOrValue === 'number'
            ? call.call(target, extra, labelsOrValue)
            : call.call(target, { ...labelsOrValue, ...extra }, value);
      }
      if (typeof property === 'string' && labelOnly.includes(property)) {
        return (labels: Labels) => call.call(target, { ...labels, ...extra });
      }
      return call.bind(target);
    },
  });
}
