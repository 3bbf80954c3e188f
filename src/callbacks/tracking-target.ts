/**
 * Where a callback's message is tracked: the hook ferry injected names the command's
 * partition (and the urgent lane) in its query, so the replica the gateway reaches writes
 * the callback to the right tracking partition, whichever replica owns it.
 */
import { LANE_PARAM, PARTITION_PARAM } from './hook-injection.ts';

export interface TrackingTopics {
  /** FERRY_TOPIC_TRACKING */
  readonly bulk: string;
  /** The urgent lane's tracking topic, when there is an urgent lane. */
  readonly urgent?: string | undefined;
}

export interface TrackingTarget {
  readonly topic: string;
  readonly partition: number;
}

/** The tracking partition a callback URL names; undefined when it names none (or nonsense). */
export function trackingTargetOf(
  requestUrl: string | undefined,
  topics: TrackingTopics | undefined,
): TrackingTarget | undefined {
  if (topics === undefined || requestUrl === undefined) return undefined;
  let query: URLSearchParams;
  try {
    query = new URL(requestUrl, 'http://ferry').searchParams;
  } catch {
    return undefined;
  }
  const text = query.get(PARTITION_PARAM);
  if (text === null || !/^\d{1,6}$/.test(text)) return undefined;
  const lane = query.get(LANE_PARAM);
  const topic = lane === 'urgent' ? topics.urgent : lane === null ? topics.bulk : undefined;
  if (topic === undefined) return undefined;
  return { topic, partition: Number(text) };
}
