/**
 * The `channel` label of `ferry_messages_sent_total` and `ferry_receipts_total`: a bounded
 * set, so a dashboard can put what was sent beside what was reported delivered.
 */
import type { OperationType } from '../contract/index.ts';

/** Channels ferry counts. `pipeline` stands for every operation that may use several. */
export const channels = ['sms', 'viber', 'rcs', 'telegram', 'voice', 'pipeline'] as const;
export type Channel = (typeof channels)[number];

/** A receipt whose callback names no channel ferry knows. */
export const UNKNOWN_CHANNEL = 'unknown';

// Operations that carry one message over one channel; the fallback types (`viber+sms`,
// `rcs+sms`, `rcs+viber+sms`) and `pipeline` may end on any of theirs, so they count as
// `pipeline`. `call/otp` places a voice call. Lookups and template changes are no messages.
const channelOfOperation: Partial<Record<OperationType, Channel>> = {
  sms: 'sms',
  viber: 'viber',
  rcs: 'rcs',
  telegram: 'telegram',
  voice: 'voice',
  'call/otp': 'voice',
  'viber+sms': 'pipeline',
  'rcs+sms': 'pipeline',
  'rcs+viber+sms': 'pipeline',
  pipeline: 'pipeline',
};

/** The channel of an operation type that sends a message; undefined for lookups and templates. */
export function channelOfType(type: unknown): Channel | undefined {
  return typeof type === 'string' ? channelOfOperation[type as OperationType] : undefined;
}

/**
 * The channel of a status callback from its `type` (spec: Events lists `sms`, `viber`,
 * `voice`, `rcs`; Telegram sends its own): `unknown` when absent or not one ferry knows.
 */
export function channelOfCallback(type: unknown): Channel | typeof UNKNOWN_CHANNEL {
  if (typeof type !== 'string') return UNKNOWN_CHANNEL;
  return channelOfType(type.toLowerCase()) ?? UNKNOWN_CHANNEL;
}
