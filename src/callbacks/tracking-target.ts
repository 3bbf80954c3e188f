/**
 * Where a callback's message is tracked: the hook ferry injected names the command's
 * partition (and the urgent lane) in its query, so the replica the gateway reaches writes
 * the callback to the right tracking partition, whichever replica owns it.
 */
import { LANE_PARAM, PARTITION_PARAM } from './hook-injection.ts';

export interface TrackingTopics {
  /** FERRY_TOPIC_TRACKING */
  readonly topic: string;
  /** The urgent lane's tracking topic, when there is an urgent lane. */
  readonly urgent?: string | undefined;
}

export interface TrackingTarget {
  readonly topic: string;
  readonly partition: number;
}

/** The tracking partition a callback URL's query names; undefined when it names none (or nonsense). */
export function trackingTargetOf(
  query: URLSearchParams | undefined,
  topics: TrackingTopics | undefined,
): TrackingTarget | undefined {
  if (topics === undefined || query === undefined) return undefined;
  const text = query.get(PARTITION_PARAM);
  if (text === null || !/^\d{1,6}$/.test(text)) return undefined;
  const lane = query.get(LANE_PARAM);
  const topic = lane === 'urgent' ? topics.urgent : lane === null ? topics.topic : undefined;
  if (topic === undefined) return undefined;
  return { topic, partition: Number(text) };
}
