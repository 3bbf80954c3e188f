/**
 * Whether a `status` record the gateway returned for a client id describes the command
 * ferry holds under that id. Lookups find a message by id alone; a record whose id or
 * channel disagrees belongs to another command that reused the id, and must not be
 * taken as proof that this command was delivered.
 */
import { type OperationType, pipelineChannels } from '../contract/index.ts';

/** The channels a message of each send type can end up on (the status record's `type`). */
const channelsByType: Partial<Record<OperationType, readonly string[]>> = {
  sms: ['sms'],
  viber: ['viber'],
  'viber+sms': ['viber', 'sms'],
  rcs: ['rcs'],
  'rcs+sms': ['rcs', 'sms'],
  'rcs+viber+sms': ['rcs', 'viber', 'sms'],
  telegram: ['telegram', 'sms'],
  voice: ['voice'],
  'call/otp': ['voice'],
  pipeline: pipelineChannels,
};

export type StatusMatch = 'match' | 'other-command';

/**
 * `match` when the record's `id` (if present) is the command's and its `type` (if
 * present) is a channel the command's type can use; else `other-command`.
 */
export function matchStatusRecord(type: OperationType, id: unknown, record: unknown): StatusMatch {
  if (typeof record !== 'object' || record === null) return 'other-command';
  const fields = record as { id?: unknown; type?: unknown };
  if (fields.id !== undefined && String(fields.id) !== String(id)) return 'other-command';
  const channels = channelsByType[type];
  if (typeof fields.type === 'string' && channels && !channels.includes(fields.type)) {
    return 'other-command';
  }
  return 'match';
}

/** The result text of a command whose id the gateway already knows for another message. */
export function idTakenError(id: unknown, record: unknown): string {
  const channel =
    typeof record === 'object' &&
    record !== null &&
    typeof (record as { type?: unknown }).type === 'string'
      ? ` (a ${(record as { type: string }).type} message)`
      : '';
  return `id ${String(id)} is already used at the gateway by another message${channel}; not sent`;
}
