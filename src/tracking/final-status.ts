/**
 * The final status event of a message: one per message ferry sent, on the final status
 * topic, whichever way its status was learned. `source` says which: the gateway's
 * callback, ferry's own `status` lookup, or `give_up` when neither gave a final status
 * within the last bound (status `UNKNOWN`).
 */
import type { OutboundRecord } from '../kafka/kafka-port.ts';
import type { SentMessage } from './tracking-records.ts';

export type FinalSource = 'callback' | 'poll' | 'give_up';

/** The status ferry reports when it gave up waiting. */
export const UNKNOWN_STATUS = 'UNKNOWN';

/** Statuses that count as delivered (the gateway's callback rule: delivered or read). */
const SUCCESS_STATUSES = new Set(['DELIVERED', 'READ', 'REPLIED']);

/** What the final status says, from a callback's status event or a status record. */
export interface FinalStatus {
  readonly status: string;
  readonly success: boolean;
  /** The channel that delivered it or was tried last. */
  readonly channel?: string | undefined;
  readonly error?: string | undefined;
  /** When the gateway says the status was reached. */
  readonly updated?: string | undefined;
  readonly msgId?: string | undefined;
  /** The callback's status event or the lookup's status record, whole. */
  readonly detail?: Readonly<Record<string, unknown>> | undefined;
}

function text(value: unknown): string | undefined {
  if (typeof value === 'string' && value !== '') return value;
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  return undefined;
}

/** The final status a callback's status event gives. */
export function fromCallback(event: Readonly<Record<string, unknown>>): FinalStatus {
  const status = text(event.status) ?? (event.success === true ? 'DELIVERED' : 'UNDELIVERED');
  return {
    status,
    success: event.success === true,
    channel: text(event.type),
    error: text(event.error),
    updated: text(event.updated),
    msgId: text(event.msg_id),
    detail: event,
  };
}

/** The final status a `status` record gives; undefined when its status is not final yet. */
export function fromStatusRecord(
  record: unknown,
  notFinal: ReadonlySet<string>,
): FinalStatus | undefined {
  if (typeof record !== 'object' || record === null || Array.isArray(record)) return undefined;
  const fields = record as Record<string, unknown>;
  const status = text(fields.status);
  if (status === undefined || notFinal.has(status.toUpperCase())) return undefined;
  return {
    status,
    success: SUCCESS_STATUSES.has(status.toUpperCase()),
    channel: text(fields.type),
    updated: text(fields.updated),
    msgId: text(fields.msg_id),
    detail: fields,
  };
}

/** What a message that never got a final status ends with. */
export function givenUpStatus(): FinalStatus {
  return { status: UNKNOWN_STATUS, success: false };
}

/** The record key of a message's final event: the command id, else the msg_id, else the request_id. */
export function finalEventKey(message: SentMessage): string {
  return message.id ?? message.msgId ?? message.requestId ?? message.key;
}

export function finalStatusRecord(
  topic: string,
  message: SentMessage,
  source: FinalSource,
  final: FinalStatus,
  finalAt: Date,
): OutboundRecord {
  const value: Record<string, unknown> = {};
  if (message.id !== undefined) value.id = message.id;
  const msgId = message.msgId ?? final.msgId;
  if (msgId !== undefined) value.msg_id = msgId;
  if (message.requestId !== undefined) value.request_id = message.requestId;
  value.type = message.type;
  value.status = final.status;
  value.success = final.success;
  if (final.channel !== undefined) value.channel = final.channel;
  if (final.error !== undefined) value.error = final.error;
  if (final.updated !== undefined) value.updated = final.updated;
  value.source = source;
  value.sent_at = message.sentAt;
  value.final_at = finalAt.toISOString();
  value.command = message.command;
  if (final.detail !== undefined) value.detail = final.detail;
  return { topic, key: finalEventKey(message), value: JSON.stringify(value) };
}
