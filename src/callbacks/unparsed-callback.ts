/**
 * A callback ferry cannot make into a status event is still a receipt someone paid for: it
 * is written to the unparsed-callbacks topic (FERRY_TOPIC_UNPARSED_CALLBACKS) byte for byte
 * as it arrived, with headers saying what it was labelled, when it came and why it could not
 * be read (docs/callbacks.md, Unparsed callbacks). A person or a later ferry can read it there.
 */
import { createHash } from 'node:crypto';
import type { OutboundRecord } from '../kafka/kafka-client.ts';

/** Headers of an unparsed-callback record. */
export const UNPARSED_HEADERS = {
  /** The request's `Content-Type`, as sent; absent when it sent none. */
  contentType: 'ferry-content-type',
  /** When ferry received it, ISO 8601 UTC. */
  receivedAt: 'ferry-received-at',
  /** Why it is not a status event, e.g. `not JSON`, `success: is required`. */
  reason: 'ferry-reason',
  /** `true` when the body was over the size limit and only its beginning is kept. */
  truncated: 'ferry-truncated',
  /** The body's declared length (`Content-Length`) when it was cut. */
  originalBytes: 'ferry-original-bytes',
} as const;

/** Characters of the reason header, at most (reasons are short; this bounds an odd one). */
const REASON_CHARS = 300;

export interface UnparsedCallback {
  /** The body as received (only its first bytes when `truncated`). */
  readonly bytes: Buffer;
  readonly contentType: string | undefined;
  readonly reason: string;
  readonly receivedAt: Date;
  readonly truncated?: boolean;
  readonly declaredBytes?: number | undefined;
  /** Trace and correlation headers the callback URL brought back (see hook-injection.ts). */
  readonly context?: Readonly<Record<string, string>>;
}

/**
 * The record: no key (there is no id to key by), the bytes as value, and the headers above
 * plus the carried trace and correlation headers.
 */
export function unparsedRecord(topic: string, callback: UnparsedCallback): OutboundRecord {
  const headers: Record<string, string> = { ...callback.context };
  if (callback.contentType !== undefined) {
    headers[UNPARSED_HEADERS.contentType] = callback.contentType;
  }
  headers[UNPARSED_HEADERS.receivedAt] = callback.receivedAt.toISOString();
  headers[UNPARSED_HEADERS.reason] = callback.reason.slice(0, REASON_CHARS);
  if (callback.truncated) {
    headers[UNPARSED_HEADERS.truncated] = 'true';
    if (callback.declaredBytes !== undefined) {
      headers[UNPARSED_HEADERS.originalBytes] = String(callback.declaredBytes);
    }
  }
  return { topic, key: null, value: callback.bytes, headers };
}

/**
 * The identity of an unparsed callback for de-duplication: its label and its bytes. The
 * same request sent again is written once; anything that differs is written again.
 */
export function unparsedFingerprint(bytes: Buffer, contentType: string | undefined): string {
  return `raw:${createHash('sha256')
    .update(contentType ?? '')
    .update('\n')
    .update(bytes)
    .digest('hex')}`;
}
