/**
 * The Kafka side of the callback route: a received body becomes either a status event (when
 * it can be read as one) or a raw unparsed-callback record (prepare), written at most once
 * per identity (write, through PublishOnce), the records of concurrent callbacks together
 * (ReceiptBatcher). The HTTP side (callback-receiver.ts) turns what this returns into the answer.
 */
import type { OutboundRecord } from '../kafka/kafka-client.ts';
import { callbackRecord, idsOf, matchKey } from '../tracking/tracking-records.ts';
import { decodeCallbackBody } from './callback-body.ts';
import { PublishOnce, type PublishOutcome } from './publish-once.ts';
import { ReceiptBatcher } from './receipt-batcher.ts';
import { callbackFingerprint, encodeStatusEvent, type StatusEventKey } from './status-event.ts';
import { normaliseCallback } from './status-normalise.ts';
import type { TrackingTarget } from './tracking-target.ts';
import { type UnparsedCallback, unparsedFingerprint, unparsedRecord } from './unparsed-callback.ts';

/** What the writer needs of a producer: `send` resolves once Kafka acknowledged every record. */
export interface CallbackProducer {
  send(records: readonly OutboundRecord[]): Promise<void>;
  /** Bytes of records per produce request at most; a write is kept under it. */
  readonly maxRequestBytes?: number;
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
  /** Records written together at most. Default 1000. */
  readonly maxBatchRecords?: number;
}

const DEFAULT_MAX_BATCH_RECORDS = 1000;
/** Under kafkajs's and the broker's defaults when the producer does not say. */
const DEFAULT_MAX_BATCH_BYTES = 512 * 1024;

/** A received callback, as the HTTP side hands it over. */
export interface ReceivedCallback {
  readonly bytes: Buffer;
  readonly contentType: string | undefined;
  readonly receivedAt: Date;
  /** Trace and correlation headers its URL brought back; they go on the record as headers. */
  readonly context: Readonly<Record<string, string>>;
  /** The tracking partition its URL names, when final status tracking is on. */
  readonly tracking?: TrackingTarget | undefined;
}

/** What a received callback becomes, before it is written. */
export type PreparedWrite = (
  | {
      readonly kind: 'event';
      readonly key: StatusEventKey;
      /** The callback's `type` when it had one: the channel of the receipts metric. */
      readonly type: unknown;
    }
  | {
      readonly kind: 'unparsed';
      readonly reason: string;
      /** Only the beginning of an oversized body is kept. */
      readonly truncated: boolean;
    }
) & {
  /** The callback's `status` when it had one (for the metric). */
  readonly status: unknown;
  readonly record: OutboundRecord;
  /** Its tracking record, written with it, when its URL named a tracking partition. */
  readonly trackingRecord?: OutboundRecord | undefined;
  readonly fingerprint: string;
};

export class CallbackWriter {
  readonly #options: CallbackWriterOptions;
  readonly #publishOnce: PublishOnce;
  readonly #batcher: ReceiptBatcher;

  constructor(options: CallbackWriterOptions) {
    this.#options = options;
    this.#publishOnce = new PublishOnce(options.dedupCapacity);
    const { producer } = options;
    this.#batcher = new ReceiptBatcher({
      send: (records) => producer.send(records),
      maxRecords: options.maxBatchRecords ?? DEFAULT_MAX_BATCH_RECORDS,
      maxBytes: producer.maxRequestBytes ?? DEFAULT_MAX_BATCH_BYTES,
    });
  }

  /** Writes so far and the records they carried. */
  get batchStats(): { readonly writes: number; readonly records: number } {
    return this.#batcher.stats;
  }

  /** Resolves when every write in flight now has settled. */
  settled(): Promise<void> {
    return this.#publishOnce.settled();
  }

  /**
   * Decides what a callback becomes: a status event keyed by its id, or a raw unparsed
   * record when it cannot be one. Never throws.
   */
  prepare(callback: ReceivedCallback): PreparedWrite {
    const decoded = decodeCallbackBody(
      callback.bytes,
      callback.contentType,
      this.#options.maxDepth,
    );
    const normalised = decoded.ok ? normaliseCallback(decoded.value) : decoded;
    if (!normalised.ok) {
      return this.prepareRaw(
        { ...callback, reason: normalised.reason },
        decoded.ok ? decoded.value.status : undefined,
      );
    }
    const { event, key } = normalised;
    const headers = callback.context;
    const value = encodeStatusEvent(event, callback.receivedAt);
    return {
      kind: 'event',
      key,
      type: event.type,
      status: event.status,
      fingerprint: callbackFingerprint(event),
      record: {
        topic: this.#options.statusTopic,
        key: key.key,
        value,
        ...(Object.keys(headers).length > 0 ? { headers } : {}),
      },
      trackingRecord:
        callback.tracking && trackingRecordOf(callback.tracking, event, callback.receivedAt),
    };
  }

  /** A callback kept raw on the unparsed topic (also the beginning of an oversized body). */
  prepareRaw(callback: UnparsedCallback, status?: unknown): PreparedWrite {
    return {
      kind: 'unparsed',
      reason: callback.reason,
      truncated: callback.truncated === true,
      status,
      fingerprint: unparsedFingerprint(callback.bytes, callback.contentType),
      record: unparsedRecord(this.#options.unparsedTopic, callback),
    };
  }

  /**
   * Writes it, at most once per fingerprint (a repeat is `duplicate`), in the next batch.
   * @throws FerryError `kafka` when Kafka did not acknowledge it in time, or the producer's error.
   */
  write(prepared: PreparedWrite): Promise<PublishOutcome> {
    const { record, trackingRecord } = prepared;
    return this.#publishOnce.run(
      prepared.fingerprint,
      () =>
        trackingRecord
          ? Promise.all([this.#batcher.add(record), this.#batcher.add(trackingRecord)]).then(
              () => undefined,
            )
          : this.#batcher.add(record),
      this.#options.publishTimeoutMs,
    );
  }
}

/** The tracking record of a callback: the status event, under the ids it names. */
function trackingRecordOf(
  target: TrackingTarget,
  event: Readonly<Record<string, unknown>>,
  receivedAt: Date,
): OutboundRecord | undefined {
  const ids = idsOf(event);
  const key = matchKey(ids);
  if (key === undefined) return undefined;
  return callbackRecord(target.topic, target.partition, {
    ...ids,
    key,
    event: { ...event, received_at: receivedAt.toISOString() },
  });
}
