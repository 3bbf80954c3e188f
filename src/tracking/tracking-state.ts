/**
 * What one command partition's owner knows of the messages waiting for a final status,
 * rebuilt from the tracking topic at every takeover and kept current by reading on.
 * Transitions, each named: messages this replica committed as sent (`sentCommitted`: they
 * count toward the bound before they are read back), a sent record read (`sentRead`), a
 * callback record read (`callbackRead`), a tombstone read (`finalizedRead`), a status lookup
 * that found no final status yet (`polled`), and a final status committed (`finalized`).
 * `due` says what is to be finalized now and how; it changes nothing.
 */
import {
  type MessageIds,
  matchKey,
  type SeenCallback,
  type SentMessage,
} from './tracking-records.ts';

export interface TrackingLimits {
  /** A message with no callback this long after it was sent is looked up; and again this often. */
  readonly pollAfterMs: number;
  /** A message with no final status this long after it was sent gets one saying so (`give_up`). */
  readonly giveUpAfterMs: number;
  /**
   * A callback with no sent message is kept this long: its message's record may still be in
   * a result transaction; after that, it is a repeat of one already finalized (or not ferry's).
   */
  readonly orphanAfterMs: number;
}

interface Tracked {
  readonly message: SentMessage;
  readonly sentAtMs: number;
  nextPollAtMs: number;
}

interface Held {
  readonly callback: SeenCallback;
  readonly readAtMs: number;
}

/** What is to be done now. */
export interface Due {
  /** Sent messages whose callback is here: finalized from it. */
  readonly answered: readonly { message: SentMessage; callback: SeenCallback }[];
  /** Sent messages to look up (their status may be final by now). */
  readonly toPoll: readonly SentMessage[];
  /** Sent messages past the last bound: finalized as unknown. */
  readonly givenUp: readonly SentMessage[];
  /** Callbacks no sent message claimed in time: dropped. */
  readonly orphans: readonly SeenCallback[];
}

export class TrackingState {
  readonly #limits: TrackingLimits;
  readonly #sent = new Map<string, Tracked>();
  /** msg_id → match key of the sent message, for callbacks that name only the msg_id. */
  readonly #byMsgId = new Map<string, string>();
  readonly #callbacks = new Map<string, Held>();
  /** Messages this replica committed as sent and has not read back yet. */
  #unread = 0;

  constructor(limits: TrackingLimits) {
    this.#limits = limits;
  }

  /** Sent messages read and not finalized. */
  get pending(): number {
    return this.#sent.size;
  }

  /** What counts toward the bound: the pending ones and those committed but not read back yet. */
  get waiting(): number {
    return this.#sent.size + this.#unread;
  }

  /**
   * `messages` sent were committed by this replica: they count toward the bound now, not
   * only once a later read finds them (a fast lane sends thousands in between).
   */
  sentCommitted(messages: number): void {
    this.#unread += Math.max(0, messages);
  }

  get heldCallbacks(): number {
    return this.#callbacks.size;
  }

  /**
   * A message ferry sent: tracked until finalized. A newer record of the same key replaces
   * it. It counts one of the committed ones off; which replica wrote it is not known, so an
   * earlier owner's record counts off too and the count errs low, never holding fetching
   * for records already read.
   */
  sentRead(message: SentMessage): void {
    if (this.#unread > 0) this.#unread -= 1;
    const sentAtMs = Date.parse(message.sentAt);
    const at = Number.isFinite(sentAtMs) ? sentAtMs : 0;
    this.#forgetSent(message.key);
    this.#sent.set(message.key, {
      message,
      sentAtMs: at,
      nextPollAtMs: at + this.#limits.pollAfterMs,
    });
    if (message.msgId !== undefined) this.#byMsgId.set(message.msgId, message.key);
  }

  /** A callback arrived for some message; the first one of a key is kept (a repeat adds nothing). */
  callbackRead(callback: SeenCallback, nowMs: number): void {
    if (this.#callbacks.has(callback.key)) return;
    this.#callbacks.set(callback.key, { callback, readAtMs: nowMs });
  }

  /** A tombstone: that record's tracking ended (finalized here or by an earlier owner). */
  finalizedRead(of: 'sent' | 'callback', key: string): void {
    if (of === 'sent') this.#forgetSent(key);
    else this.#callbacks.delete(key);
  }

  /** Looked up, and the status was not final yet: asked again a poll interval later. */
  polled(key: string, nowMs: number): void {
    const tracked = this.#sent.get(key);
    if (tracked) tracked.nextPollAtMs = nowMs + this.#limits.pollAfterMs;
  }

  /** A final status of the message was committed (with the tombstones of these keys). */
  finalized(sentKey: string | undefined, callbackKey?: string): void {
    if (sentKey !== undefined) this.#forgetSent(sentKey);
    if (callbackKey !== undefined) this.#callbacks.delete(callbackKey);
  }

  /** What is due at `nowMs`. */
  due(nowMs: number): Due {
    const answered: { message: SentMessage; callback: SeenCallback }[] = [];
    const claimed = new Set<string>();
    const orphans: SeenCallback[] = [];
    for (const { callback, readAtMs } of this.#callbacks.values()) {
      const key = this.#sentKeyOf(callback);
      const tracked = key === undefined ? undefined : this.#sent.get(key);
      if (tracked && key !== undefined && !claimed.has(key)) {
        claimed.add(key);
        answered.push({ message: tracked.message, callback });
      } else if (!tracked && nowMs - readAtMs >= this.#limits.orphanAfterMs) {
        orphans.push(callback);
      }
    }
    const toPoll: SentMessage[] = [];
    const givenUp: SentMessage[] = [];
    for (const [key, tracked] of this.#sent) {
      if (claimed.has(key)) continue;
      if (nowMs - tracked.sentAtMs >= this.#limits.giveUpAfterMs) givenUp.push(tracked.message);
      else if (tracked.message.lookup && nowMs >= tracked.nextPollAtMs) {
        toPoll.push(tracked.message);
      }
    }
    return { answered, toPoll, givenUp, orphans };
  }

  /** Whether the message of this key still waits for its final status. */
  isPending(key: string): boolean {
    return this.#sent.has(key);
  }

  /** The sent message a callback is about: by its match key, else by the msg_id it names. */
  #sentKeyOf(ids: MessageIds): string | undefined {
    const key = matchKey(ids);
    if (key !== undefined && this.#sent.has(key)) return key;
    if (ids.msgId !== undefined) return this.#byMsgId.get(ids.msgId);
    return undefined;
  }

  #forgetSent(key: string): void {
    const tracked = this.#sent.get(key);
    if (!tracked) return;
    this.#sent.delete(key);
    const msgId = tracked.message.msgId;
    if (msgId !== undefined && this.#byMsgId.get(msgId) === key) this.#byMsgId.delete(msgId);
  }
}
