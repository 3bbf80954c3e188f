/** A channel a message can end on. */
export type Channel = 'sms' | 'viber' | 'rcs' | 'telegram' | 'voice' | 'whatsapp';

/** One element of `replies` (spec: Message status record). */
export interface ReplyRecord {
  readonly datetime: string;
  readonly message?: string;
  readonly media?: { readonly url: string; readonly filename: string; readonly filesize: number };
}

/** The final state decided when a message is accepted; it becomes visible at `finalAtMs`. */
export interface FinalState {
  /** Callback `success`: delivered, read or replied (spec: States and transitions rule 2). */
  readonly success: boolean;
  /** The channel that delivered it, or the last one tried when it failed. */
  readonly channel: Channel;
  readonly status: string;
  readonly error?: string;
  readonly replies?: readonly ReplyRecord[];
  /** Voice only: call duration in seconds and the DTMF digit entered. */
  readonly durationS?: number;
  readonly reply?: string;
}

/** A message the emulator accepted (a send that got a `msg_id`). */
export interface AcceptedMessage {
  /** The client's `id` exactly as sent; undefined when the operation had none (pipeline rule 4). */
  readonly id: unknown;
  readonly msgId: string;
  readonly operationType: string;
  /** The `request_id` of the async request that carried it. */
  readonly requestId: string | undefined;
  /** The channel tried first: the record's `type` before the final state. */
  readonly firstChannel: Channel;
  readonly acceptedAtMs: number;
  readonly finalAtMs: number;
  readonly final: FinalState;
  /** Where the final-state callback goes: the `hook`, the account notification URL for `pipeline`, or none. */
  readonly callbackUrl: string | undefined;
}

/** Status of an accepted message whose final state is not reached yet (the spec does not list one). */
export const PENDING_STATUS = 'SENT';

/** Options of the ledger. */
export interface MessageLedgerOptions {
  /** At most this many messages are kept for the `status` view; the oldest go first. Counts per `id` are kept regardless. */
  readonly maxMessages: number;
}

/**
 * What the emulator accepted: the latest message per client `id` (for the
 * `status` operation, which ferry uses to learn whether a request whose answer
 * was lost reached the gateway) and how many sends each `id` had
 * (so tests can count duplicates).
 */
export class MessageLedger {
  readonly #maxMessages: number;
  #messagesById = new Map<string, AcceptedMessage>();
  #sendsById = new Map<string, number>();
  #duplicates = new Set<string>();
  #acceptedWithoutId = 0;
  #nextMsgId: number;

  constructor(options: MessageLedgerOptions) {
    this.#maxMessages = options.maxMessages;
    // Gateway ids stay unique across restarts of the emulator: they start from the clock.
    this.#nextMsgId = Date.now() * 1000;
  }

  /** A fresh gateway message id. */
  nextMsgId(): string {
    this.#nextMsgId += 1;
    return String(this.#nextMsgId);
  }

  /** Records an accepted message and counts a send for its `id`. */
  record(message: AcceptedMessage): void {
    if (message.id === undefined || message.id === null) {
      this.#acceptedWithoutId += 1;
      return;
    }
    const key = String(message.id);
    const sends = (this.#sendsById.get(key) ?? 0) + 1;
    this.#sendsById.set(key, sends);
    if (sends > 1) this.#duplicates.add(key);
    // Re-insert so the Map's order stays "least recently accepted first" for eviction.
    this.#messagesById.delete(key);
    this.#messagesById.set(key, message);
    if (this.#messagesById.size > this.#maxMessages) {
      const oldest = this.#messagesById.keys().next();
      if (oldest.done !== true) this.#messagesById.delete(oldest.value);
    }
  }

  /** The latest accepted message with this client `id` (compared as strings). */
  find(id: unknown): AcceptedMessage | undefined {
    return this.#messagesById.get(String(id));
  }

  /** Sends accepted per client `id`. */
  sendsById(): Record<string, number> {
    return Object.fromEntries(this.#sendsById);
  }

  /** Ids accepted more than once, in the order their second send arrived. */
  duplicates(): string[] {
    return [...this.#duplicates];
  }

  /** Number of distinct ids accepted, and of accepted messages that had no id. */
  counts(): { readonly distinctIds: number; readonly withoutId: number } {
    return { distinctIds: this.#sendsById.size, withoutId: this.#acceptedWithoutId };
  }

  /** Forgets every message and count (gateway ids keep increasing). */
  reset(): void {
    this.#messagesById = new Map();
    this.#sendsById = new Map();
    this.#duplicates = new Set();
    this.#acceptedWithoutId = 0;
  }
}

/** ISO 8601 date-time with an explicit UTC offset, seconds precision: `2024-05-01T12:00:00+00:00`. */
export function isoWithOffset(timeMs: number): string {
  return `${new Date(timeMs).toISOString().slice(0, 19)}+00:00`;
}

/** The `status` operation's payload for a message, as seen at `nowMs` (spec: Message status record). */
export function statusRecord(message: AcceptedMessage, nowMs: number): Record<string, unknown> {
  if (nowMs < message.finalAtMs) {
    return {
      id: message.id,
      msg_id: message.msgId,
      type: message.firstChannel,
      status: PENDING_STATUS,
      updated: isoWithOffset(message.acceptedAtMs),
    };
  }
  const final = message.final;
  const record: Record<string, unknown> = {
    id: message.id,
    msg_id: message.msgId,
    type: final.channel,
    status: final.status,
    updated: isoWithOffset(message.finalAtMs),
  };
  if (final.replies !== undefined) record.replies = final.replies;
  return record;
}
