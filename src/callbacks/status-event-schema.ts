/**
 * The published JSON Schema of a status event (README, Topics and records: Status event):
 * the status callback as the gateway sent it, derived from the same rule table that admits
 * callbacks (src/contract/status-callback.ts), plus the field ferry adds.
 */
import {
  type JsonSchema,
  statusCallbackSchema,
  withDescriptions,
} from '../contract/json-schema.ts';
import { keyFields } from './status-event.ts';

/** What each callback field means (docs/callbacks.md; gateway-api.md, Status callbacks). */
const meanings: Readonly<Record<string, string>> = {
  success: 'True when the message was delivered or read.',
  id: "The client's message id: the command's `id`, as a string.",
  msg_id: "The gateway's message id.",
  type: 'The channel: `sms`, `viber`, `voice`, `rcs`, or another the gateway adds.',
  status: 'The message state: `DELIVERED`, `READ`, `REPLIED`, `REJECTED`, …',
  error: 'Why the message was rejected.',
  updated: 'When the message reached this state.',
  reply: 'The digit the recipient entered (DTMF), for voice calls.',
  duration: 'The call duration in seconds, for voice calls.',
  request_id: 'The `request_id` of the async request that queued the message.',
  replies: 'The replies to a Viber 2 Way message.',
  'replies.datetime': 'When the reply came.',
  'replies.message': 'The reply text; absent for an attachment alone.',
  'replies.media': 'The attachment of the reply.',
  'replies.media.url': 'Where the attachment is.',
  'replies.media.filename': 'The file name of the attachment.',
  'replies.media.filesize': 'The size of the attachment in bytes.',
};

/** The schema of a `ferry.status` record value. */
export function statusEventSchema(): JsonSchema {
  const callback = statusCallbackSchema();
  return {
    title: 'ferry status event',
    description:
      'One per distinct gateway status callback (the whole normalised receipt is its identity: a repeat of the same receipt is published once per replica), keyed by ' +
      `${keyFields.map((field) => `\`${field}\``).join(', else ')} as a string. ` +
      'Every field of the callback, unknown ones included and in their order, normalised (ids as strings, `success` as a boolean, date-times in UTC), plus `received_at`. ' +
      'Callbacks that cannot be read this way are kept raw on the unparsed-callbacks topic instead.',
    ...callback,
    properties: {
      ...withDescriptions(
        callback.properties as Record<string, JsonSchema>,
        (path) => meanings[path],
      ),
      updated_assumed_utc: {
        const: true,
        description:
          'Present when the gateway sent `updated` without a UTC offset: ferry read it as UTC.',
      },
      received_at: {
        type: 'string',
        format: 'date-time',
        description:
          "When ferry received the callback: ISO 8601 UTC, the receiving replica's clock.",
      },
    },
    required: [...((callback.required as string[] | undefined) ?? []), 'received_at'],
    // The record key: a callback none of these fields identifies is kept raw instead.
    anyOf: keyFields.map((field) => ({
      required: [field],
      properties: { [field]: { type: 'string', minLength: 1 } },
    })),
  };
}
