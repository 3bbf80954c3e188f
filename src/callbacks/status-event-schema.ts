/**
 * The published JSON Schema of a status event (README, Topics and records: Status event):
 * the status callback as the gateway sent it, derived from the same rule table that admits
 * callbacks (src/contract/status-callback.ts), plus the field ferry adds.
 */
import { type JsonSchema, statusCallbackSchema } from '../contract/json-schema.ts';
import { keyFields } from './status-event.ts';

/** The schema of a `ferry.status` record value. */
export function statusEventSchema(): JsonSchema {
  const callback = statusCallbackSchema();
  return {
    title: 'ferry status event',
    description:
      'One per distinct gateway status callback (a repeat with the same key field, status and updated is published once per replica), keyed by ' +
      `${keyFields.map((field) => `\`${field}\``).join(', else ')} as a string. ` +
      'Every field of the callback as received, unknown ones included and in their order, plus `received_at`. ' +
      'Callbacks that fail these rules are answered 400 and never become events.',
    ...callback,
    properties: {
      ...(callback.properties as object),
      received_at: {
        type: 'string',
        format: 'date-time',
        description:
          "When ferry received the callback: ISO 8601 UTC, the receiving replica's clock.",
      },
    },
    required: [...((callback.required as string[] | undefined) ?? []), 'received_at'],
    // The record key: a callback none of these fields identifies is refused (400).
    anyOf: keyFields.map((field) => ({
      required: [field],
      properties: { [field]: { type: 'string', minLength: 1 } },
    })),
  };
}
