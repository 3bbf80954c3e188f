/**
 * The published JSON Schema of a final status event (README, Topics and records: Final
 * status event): one per message ferry sent, from its callback, a `status` lookup, or
 * given up.
 */
import type { JsonSchema } from '../json/record-schema.ts';

const text = (description: string): JsonSchema => ({ type: 'string', description });

export function finalStatusEventSchema(): JsonSchema {
  return {
    title: 'ferry final status event',
    description:
      'Exactly one per message ferry sent (with FERRY_STATUS_TRACKING), keyed by the command id (else msg_id, else request_id): the status the gateway gave in its callback, the answer to ferry’s own `status` lookup when no callback came within FERRY_STATUS_POLL_AFTER_MS, or UNKNOWN when neither gave a final status within FERRY_STATUS_GIVE_UP_AFTER_MS.',
    type: 'object',
    required: ['type', 'status', 'success', 'source', 'sent_at', 'final_at', 'command'],
    properties: {
      id: text("The command's `id`, as a string."),
      msg_id: text("The gateway's message id (sync sends, or as the callback or lookup named it)."),
      request_id: text('The `request_id` of the async request that queued the message.'),
      type: text("The command's operation type (`sms`, `viber`, `call/otp`, …)."),
      status: text(
        'The final state: the gateway’s (`DELIVERED`, `READ`, `REPLIED`, `REJECTED`, …), or `UNKNOWN` when ferry gave up.',
      ),
      success: { type: 'boolean', description: 'True when the message was delivered or read.' },
      channel: text('The channel that delivered the message, or was tried last.'),
      error: text('Why the message was rejected, as the gateway said.'),
      updated: text('When the gateway says the message reached this state.'),
      source: {
        enum: ['callback', 'poll', 'give_up'],
        description:
          'How ferry learned it: the gateway’s status callback, ferry’s `status` lookup, or neither within the last bound.',
      },
      sent_at: {
        type: 'string',
        format: 'date-time',
        description: 'When the gateway accepted the message (the result’s `completed_at`).',
      },
      final_at: {
        type: 'string',
        format: 'date-time',
        description: 'When ferry wrote this event.',
      },
      command: {
        type: 'object',
        description: 'The command record the message came from.',
        required: ['topic', 'partition', 'offset'],
        properties: {
          topic: text('The commands topic (the bulk or the urgent one).'),
          partition: {
            type: 'integer',
            minimum: 0,
            description: 'The command’s partition: its tracking records live in the same number.',
          },
          offset: {
            type: 'string',
            pattern: '^[0-9]+$',
            description: 'The command record’s offset, as a string.',
          },
        },
        additionalProperties: false,
      },
      detail: {
        type: 'object',
        description:
          'The callback’s status event or the lookup’s status record, whole (absent when ferry gave up).',
      },
    },
    additionalProperties: false,
  };
}
