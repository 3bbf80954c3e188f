/**
 * The records of the tracking topic, where each message ferry sent waits for its final
 * status. The topic is compacted and co-partitioned with the commands: the records of a
 * command's messages live in the partition with the command's number, so the owner of that
 * command partition is the one replica that reads and finalizes them.
 *
 * - `sent:<match key>` — a message ferry sent: written in the transaction of the command's
 *   result, so a result and its tracking record exist together or not at all.
 * - `callback:<match key>` — a status callback for it, written by whichever replica the
 *   gateway reached, before that replica answered the callback.
 * - a null value (tombstone) under either key — finalized: written in the transaction of
 *   the message's final status event, so the event and the end of tracking go together.
 *
 * The match key is what a callback and the sent record share: the command's `id` when it
 * has one, else the gateway's `msg_id`, else the async `request_id`.
 */
import type { OutboundRecord } from '../kafka/kafka-port.ts';

export const SENT_PREFIX = 'sent:';
export const CALLBACK_PREFIX = 'callback:';

/** The ids a message is known by: a callback names at least one of them. */
export interface MessageIds {
  readonly id?: string | undefined;
  readonly msgId?: string | undefined;
  readonly requestId?: string | undefined;
}

/** A message ferry sent, as its tracking record keeps it. */
export interface SentMessage extends MessageIds {
  readonly key: string;
  /** The command's operation type. */
  readonly type: string;
  /** When the gateway accepted it (the result's completed_at), ISO 8601. */
  readonly sentAt: string;
  /** The command record it came from. */
  readonly command: { readonly topic: string; readonly partition: number; readonly offset: string };
  /** Whether its status can be asked of the gateway (`status` by numeric client id). */
  readonly lookup: boolean;
}

/** A status callback as its tracking record keeps it. */
export interface SeenCallback extends MessageIds {
  readonly key: string;
  /** The status event written to the status topic for it (its JSON object). */
  readonly event: Readonly<Record<string, unknown>>;
}

export type TrackingRecord =
  | { readonly kind: 'sent'; readonly message: SentMessage }
  | { readonly kind: 'callback'; readonly callback: SeenCallback }
  | { readonly kind: 'finalized'; readonly key: string; readonly of: 'sent' | 'callback' };

/** A string id from a field that may hold a number: undefined when it holds neither. */
export function idText(value: unknown): string | undefined {
  if (typeof value === 'string' && value !== '') return value;
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  return undefined;
}

/** The match key of a message or callback; undefined when it names no id at all. */
export function matchKey(ids: MessageIds): string | undefined {
  if (ids.id !== undefined) return `id:${ids.id}`;
  if (ids.msgId !== undefined) return `msg:${ids.msgId}`;
  if (ids.requestId !== undefined) return `req:${ids.requestId}`;
  return undefined;
}

function withIds(ids: MessageIds): Record<string, string> {
  const out: Record<string, string> = {};
  if (ids.id !== undefined) out.id = ids.id;
  if (ids.msgId !== undefined) out.msg_id = ids.msgId;
  if (ids.requestId !== undefined) out.request_id = ids.requestId;
  return out;
}

export function sentRecord(topic: string, partition: number, message: SentMessage): OutboundRecord {
  return {
    topic,
    partition,
    key: `${SENT_PREFIX}${message.key}`,
    value: JSON.stringify({
      ...withIds(message),
      type: message.type,
      sent_at: message.sentAt,
      command: message.command,
      lookup: message.lookup,
    }),
  };
}

export function callbackRecord(
  topic: string,
  partition: number,
  callback: SeenCallback,
): OutboundRecord {
  return {
    topic,
    partition,
    key: `${CALLBACK_PREFIX}${callback.key}`,
    value: JSON.stringify({ ...withIds(callback), event: callback.event }),
  };
}

/** The tombstone that ends the tracking of one record. */
export function finalizedRecord(
  topic: string,
  partition: number,
  of: 'sent' | 'callback',
  key: string,
): OutboundRecord {
  return {
    topic,
    partition,
    key: `${of === 'sent' ? SENT_PREFIX : CALLBACK_PREFIX}${key}`,
    value: null,
  };
}

/** The ids a callback, a status event or a tracking record's value names. */
export function idsOf(value: Readonly<Record<string, unknown>>): MessageIds {
  return {
    id: idText(value.id),
    msgId: idText(value.msg_id),
    requestId: idText(value.request_id),
  };
}

/**
 * A tracking record read back; undefined for anything ferry did not write (it is passed
 * over, never trusted).
 */
export function readTrackingRecord(
  key: Buffer | null,
  value: Buffer | null,
): TrackingRecord | undefined {
  if (key === null) return undefined;
  const text = key.toString('utf8');
  const of = text.startsWith(SENT_PREFIX)
    ? 'sent'
    : text.startsWith(CALLBACK_PREFIX)
      ? 'callback'
      : undefined;
  if (of === undefined) return undefined;
  const matched = text.slice(of === 'sent' ? SENT_PREFIX.length : CALLBACK_PREFIX.length);
  if (matched === '') return undefined;
  if (value === null) return { kind: 'finalized', key: matched, of };
  let parsed: unknown;
  try {
    parsed = JSON.parse(value.toString('utf8'));
  } catch {
    return undefined;
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return undefined;
  const fields = parsed as Record<string, unknown>;
  if (of === 'callback') {
    const event = fields.event;
    if (typeof event !== 'object' || event === null || Array.isArray(event)) return undefined;
    return {
      kind: 'callback',
      callback: { ...idsOf(fields), key: matched, event: event as Record<string, unknown> },
    };
  }
  const command = fields.command as Record<string, unknown> | undefined;
  if (
    typeof fields.type !== 'string' ||
    typeof fields.sent_at !== 'string' ||
    typeof command !== 'object' ||
    command === null ||
    typeof command.topic !== 'string' ||
    typeof command.partition !== 'number' ||
    typeof command.offset !== 'string'
  ) {
    return undefined;
  }
  return {
    kind: 'sent',
    message: {
      ...idsOf(fields),
      key: matched,
      type: fields.type,
      sentAt: fields.sent_at,
      command: { topic: command.topic, partition: command.partition, offset: command.offset },
      lookup: fields.lookup === true,
    },
  };
}
