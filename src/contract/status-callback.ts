/**
 * The status callback the gateway POSTs to a `hook` (spec: Events), and the reply elements it
 * shares with the message status record (spec: Message status record), each interface beside
 * its rule table (checked against it at compile time, see field-rules.ts).
 */
import {
  boolean,
  dateTime,
  type FieldRules,
  number,
  object,
  objectArray,
  optional,
  required,
  string,
  uri,
} from './field-rules.ts';

/** Unknown extra properties are kept: the gateway may send more than the table lists. */
interface Extras {
  [extra: string]: unknown;
}

/** An attachment of a Viber reply (spec: Message status record, `replies`). */
export interface ReplyMedia extends Extras {
  /** Absolute URI of the attachment. */
  url?: string;
  filename?: string;
  /** Bytes. */
  filesize?: number;
}
const replyMediaRules = {
  url: optional(uri),
  filename: optional(string),
  filesize: optional(number),
} as const satisfies FieldRules<ReplyMedia>;

/**
 * One reply to a Viber 2 Way message. The spec gives the fields without a Required column, so
 * none is required; `message` "may be absent".
 */
export interface Reply extends Extras {
  /** ISO 8601 date-time with offset. */
  datetime?: string;
  /** Reply text. */
  message?: string;
  media?: ReplyMedia;
}
const replyRules = {
  datetime: optional(dateTime),
  message: optional(string),
  media: optional(object<ReplyMedia>(replyMediaRules)),
} as const satisfies FieldRules<Reply>;

/**
 * The body of the status callback (spec: Events). Only `success` is required.
 *
 * `type` is checked as a string, not against the listed values `sms`, `viber`, `voice`,
 * `rcs`: `telegram` also sends callbacks (spec: Events, "Emitted for operations ...") with a
 * `type` the list does not cover, and rejecting a genuine callback would lose it.
 */
export interface StatusCallback extends Extras {
  /** True when the message was delivered or read (spec: States and transitions, rule 2). */
  success: boolean;
  /** The client's message id. */
  id?: string;
  /** The gateway's message id. */
  msg_id?: string;
  /** Channel: `sms`, `viber`, `voice` or `rcs` as listed. */
  type?: string;
  /** Message status, e.g. `DELIVERED`, `READ`, `REJECTED`. */
  status?: string;
  /** Why the message was rejected. */
  error?: string;
  /** ISO 8601 date-time with offset: time of the status. */
  updated?: string;
  /** Digit entered by the recipient (DTMF). */
  reply?: string;
  /** Call duration, seconds. */
  duration?: number;
  /** The `request_id` of the async response that queued the message. */
  request_id?: string;
  replies?: Reply[];
}
/** Rule table of {@link StatusCallback}. */
export const statusCallbackRules = {
  success: required(boolean),
  id: optional(string),
  msg_id: optional(string),
  type: optional(string),
  status: optional(string),
  error: optional(string),
  updated: optional(dateTime),
  reply: optional(string),
  duration: optional(number),
  request_id: optional(string),
  replies: optional(objectArray<Reply>(replyRules)),
} as const satisfies FieldRules<StatusCallback>;
