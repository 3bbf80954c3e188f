/**
 * The records of the dedupe topic: one per command id whose message reached the gateway
 * (or may have), keyed by the commands partition and the id (`2:1021`), written to the commands' partition number in the
 * transaction of its result, and read back at a takeover. Which outcomes count as
 * reaching the gateway is decided here too.
 */
import type { OutboundRecord } from '../kafka/kafka-port.ts';
import type { FirstCompletion } from './dedupe-store.ts';
import type { SendOutcome } from './send-outcome.ts';

/** Version of the record value's layout; readers skip values of a version they do not know. */
const LAYOUT = 1;

/** The key a command id is kept under (reconcilable ids are safe integers). */
export function dedupeKey(id: unknown): string {
  return String(id);
}

/**
 * The first completion `outcome` makes of a command, or undefined when the gateway never
 * got it (refused, answered with an error, given up on unsent): a copy of such a command
 * is sent as a new one, and may succeed where the first failed.
 */
export function firstCompletion(
  outcome: SendOutcome | undefined,
  at: { partition: number; offset: string; completedAt: string },
): FirstCompletion | undefined {
  const atMs = Date.parse(at.completedAt);
  const base = { partition: at.partition, offset: at.offset, completedAt: at.completedAt, atMs };
  switch (outcome?.kind) {
    case 'item': {
      if (!outcome.item.success) return undefined;
      const data = outcome.item.data as { msg_id?: unknown } | null | undefined;
      const msgId = typeof data === 'object' && data !== null ? data.msg_id : undefined;
      return msgId === undefined ? { ...base, success: true } : { ...base, success: true, msgId };
    }
    case 'accepted':
      return { ...base, success: true, requestId: outcome.requestId };
    case 'reconciled': {
      const record = outcome.record as { msg_id?: unknown } | null;
      const msgId = typeof record === 'object' && record !== null ? record.msg_id : undefined;
      return msgId === undefined ? { ...base, success: true } : { ...base, success: true, msgId };
    }
    case 'transport':
      return outcome.delivery === 'in_doubt'
        ? { ...base, success: false, delivery: 'in_doubt' }
        : undefined;
    default:
      return undefined;
  }
}

/** The dedupe topic's record of `first`. */
export function dedupeRecord(topic: string, id: string, first: FirstCompletion): OutboundRecord {
  const value: Record<string, unknown> = {
    v: LAYOUT,
    partition: first.partition,
    offset: first.offset,
    success: first.success,
    completed_at: first.completedAt,
  };
  if (first.msgId !== undefined) value.msg_id = first.msgId;
  if (first.requestId !== undefined) value.request_id = first.requestId;
  if (first.delivery !== undefined) value.delivery = first.delivery;
  // The key names the commands partition too: on a dedupe topic with fewer partitions,
  // compaction must not keep one partition's record of an id in place of another's.
  return {
    topic,
    key: `${first.partition}:${id}`,
    value: JSON.stringify(value),
    partition: first.partition,
  };
}

/**
 * A record read back from the dedupe topic, or undefined when it is not one of
 * `partition`'s (another layout, a tombstone, another commands partition sharing this
 * topic partition because the topic has fewer partitions).
 */
export function readDedupeRecord(
  key: Buffer | null,
  value: Buffer | null,
  partition: number,
): { id: string; first: FirstCompletion } | undefined {
  if (key === null || value === null) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(value.toString('utf8'));
  } catch {
    return undefined;
  }
  if (typeof parsed !== 'object' || parsed === null) return undefined;
  const v = parsed as Record<string, unknown>;
  if (v.v !== LAYOUT || v.partition !== partition) return undefined;
  if (typeof v.offset !== 'string' || typeof v.success !== 'boolean') return undefined;
  if (typeof v.completed_at !== 'string') return undefined;
  const atMs = Date.parse(v.completed_at);
  if (!Number.isFinite(atMs)) return undefined;
  const first: FirstCompletion = {
    partition,
    offset: v.offset,
    success: v.success,
    completedAt: v.completed_at,
    atMs,
    ...(v.msg_id !== undefined ? { msgId: v.msg_id } : {}),
    ...(typeof v.request_id === 'string' ? { requestId: v.request_id } : {}),
    ...(v.delivery === 'in_doubt' ? { delivery: 'in_doubt' as const } : {}),
  };
  const prefix = `${partition}:`;
  const text = key.toString('utf8');
  if (!text.startsWith(prefix)) return undefined;
  return { id: text.slice(prefix.length), first };
}
