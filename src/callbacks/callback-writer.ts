/**
 * The Kafka side of the callback route: a received body becomes either a status event (when
 * it can be read as one) or a raw unparsed-callback record, written at most once per
 * identity (PublishOnce). The HTTP side (callback-receiver.ts) turns what this returns into
 * the answer.
 */
import type { OutboundRecord } from '../kafka/kafka-client.ts';
import { decodeCallbackBody } from './callback-body.ts';
import { PublishOnce, type PublishOutcome } from './publish-once.ts';
import { callbackFingerprint, encodeStatusEvent, type StatusEventKey } from './status-event.ts';
import { normaliseCallback } from './status-normalise.ts';
import { type UnparsedCallback, unparsedFingerprint, unparsedRecord } from './unparsed-callback.ts';

/** What the writer needs of a producer: `send` resolves once Kafka acknowledged every record. */
export interface CallbackProducer {
  send(records: readonly OutboundRecord[]): Promise<void>;
}

export interface CallbackWriterOptions {
  readonly producer: CallbackProducer;
  /** FERRY_TOPIC_STATUS */
  readonly statusTopic: string;
  /** FERRY_TOPIC_UNPARSED_CALLBACKS */
  readonly unparsedTopic: string;
  /** Deepest nesting of objects and arrays read as JSON. */
  readonly maxDepth: number;
  /** Identities remembered to recognise a repeat (per replica). */
  readonly dedupCapacity: number;
  /** Longest wait for Kafka's acknowledgement, ms. */
  readonly publishTimeoutMs: number;
}

/** A received callback, as the HTTP side hands it over. */
export interface ReceivedCallback {
  readonly bytes: Buffer;
  readonly contentType: string | undefined;
  readonly receivedAt: Date;
  /** Trace and correlation headers its URL brought back; they go on the record as headers. */
  readonly context: Readonly<Record<string, string>>;
}

export type WriteOutcome =
  | {
      readonly kind: 'event';
      readonly outcome: PublishOutcome;
      readonly key: StatusEventKey;
      readonly status: unknown;
    }
  | {
      readonly kind: 'unparsed';
      readonly outcome: PublishOutcome;
      readonly reason: string;
      /** The body's `status` when it was an object that carried one (for the metric). */
      readonly status: unknown;
    };

export class CallbackWriter {
  readonly #options: CallbackWriterOptions;
  readonly #publishOnce: PublishOnce;

  constructor(options: CallbackWriterOptions) {
    this.#options = options;
    this.#publishOnce = new PublishOnce(options.dedupCapacity);
  }

  /** Resolves when every write in flight now has settled. */
  settled(): Promise<void> {
    return this.#publishOnce.settled();
  }

  /**
   * Writes a callback as a status event keyed by its id, or raw when it cannot be one.
   * @throws FerryError `kafka` when Kafka did not acknowledge it in time, or the producer's error.
   */
  async write(callback: ReceivedCallback): Promise<WriteOutcome> {
    const decoded = decodeCallbackBody(
      callback.bytes,
      callback.contentType,
      this.#options.maxDepth,
    );
    const normalised = decoded.ok ? normaliseCallback(decoded.value) : decoded;
    if (!normalised.ok) {
      const outcome = await this.writeRaw({ ...callback, reason: normalised.reason });
      return {
        kind: 'unparsed',
        outcome,
        reason: normalised.reason,
        status: decoded.ok ? decoded.value.status : undefined,
      };
    }
    const { event, key } = normalised;
    const headers = callback.context;
    const record: OutboundRecord = {
      topic: this.#options.statusTopic,
      key: key.key,
      value: encodeStatusEvent(event, callback.receivedAt),
      ...(Object.keys(headers).length > 0 ? { headers } : {}),
    };
    const outcome = await this.#publish(callbackFingerprint(event), record);
    return { kind: 'event', outcome, key, status: event.status };
  }

  /**
   * Writes a callback raw to the unparsed topic (also the beginning of a body over the
   * size limit). @throws like write().
   */
  writeRaw(callback: UnparsedCallback): Promise<PublishOutcome> {
    return this.#publish(
      unparsedFingerprint(callback.bytes, callback.contentType),
      unparsedRecord(this.#options.unparsedTopic, callback),
    );
  }

  #publish(fingerprint: string, record: OutboundRecord): Promise<PublishOutcome> {
    return this.#publishOnce.run(
      fingerprint,
      () => this.#options.producer.send([record]),
      this.#options.publishTimeoutMs,
    );
  }
}
