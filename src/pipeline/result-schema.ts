/**
 * The published JSON Schema of a result record (README, Topics and records: Result), written
 * beside `Result` and checked against it at compile time (src/json/record-schema.ts).
 */
import { everyValue, type JsonSchema, recordSchema, sometimes } from '../json/record-schema.ts';
import { errorCodes, type Result, type Stage } from './result.ts';
import type { Delivery } from './send-outcome.ts';

const stages = everyValue<Stage>()(['validation', 'upstream', 'transport']);
const deliveries = everyValue<Delivery>()(['unsent', 'in_doubt']);
const transports = everyValue<Result['transport']>()(['sync', 'async']);

/** A value that becomes a string preview of its JSON text when the record had to be cut. */
const previewNote = 'When `truncated` is true this may instead be a string preview of its JSON.';

/** The schema of a `ferry.results` record value. */
export const resultSchema: JsonSchema = recordSchema<Result>()(
  {
    title: 'ferry result',
    description:
      'Exactly one per command record, keyed like the command, written in a Kafka transaction (read with read_committed). ' +
      'Results of one commands partition appear in the order of their commands. ' +
      'Readers must ignore properties they do not know: new optional ones may be added.',
    additionalProperties: false,
  },
  {
    id: sometimes({
      description: `The command's \`id\` as it came, when it had one (any JSON value); a number that JSON parsers round (one past 2^53 - 1, refused) is written with every digit it came with, so correlate by the record key. ${previewNote}`,
    }),
    type: sometimes({
      description: `The command's \`type\` as it came, when it had one. ${previewNote}`,
    }),
    success: {
      schema: {
        type: 'boolean',
        description: 'True when the gateway accepted or answered the operation.',
      },
      required: true,
    },
    error: sometimes({
      type: 'string',
      description:
        "Why it failed, in words: a validation error names the field and the rule (`sms_lifetime: must be between 3600 and 259200 seconds`), else the gateway's text (`Error in Alpha-name`) or what ferry gave up on. Present whenever `success` is false.",
    }),
    stage: {
      schema: {
        type: 'string',
        enum: stages,
        description:
          '`validation`: never sent (it broke a rule, was over a limit, was a `duplicate` of an earlier command with its id, its deadline passed first (`expired`), or ferry failed on it: `internal error: …`); `upstream`: the gateway answered; `transport`: ferry gave up after its retries.',
      },
      required: true,
    },
    transport: {
      schema: {
        type: 'string',
        enum: transports,
        description:
          'The endpoint used or that would have been used: `FERRY_TRANSPORT`, or the `ferry-transport` header.',
      },
      required: true,
    },
    msg_id: sometimes({
      description: `Sync sends: the gateway's message id. Also set on a send found by a status lookup (\`reconciled\`). ${previewNote}`,
    }),
    parts: sometimes({
      description: `Sync sends: the number of message parts billed. ${previewNote}`,
    }),
    request_id: sometimes({
      type: 'string',
      description:
        "Async sends: the gateway's id of the queued request, repeated in its status callbacks.",
    }),
    data: sometimes({
      description: `Lookups and template operations: the gateway's answer item \`data\` as it came. ${previewNote}`,
    }),
    delivery: sometimes({
      type: 'string',
      enum: deliveries,
      description:
        'Stage `transport` only. `unsent`: no attempt can have reached the gateway, or a final status lookup found nothing (safe to send again); `in_doubt`: it may have been delivered (look it up before sending again).',
    }),
    reconciled: sometimes({
      const: true,
      description:
        'The gateway already had this message (found by a status lookup after a lost answer or a takeover): it was not sent again.',
    }),
    duplicate_of: sometimes({
      type: 'object',
      description:
        "Code `duplicate` only: the first command with this id on the partition, whose message reached the gateway (or may have, `delivery: in_doubt`) within FERRY_DEDUPE_WINDOW_MS. This command was not sent; `msg_id` or `request_id` repeat the first's.",
      properties: {
        partition: {
          type: 'integer',
          minimum: 0,
          description: 'The commands partition of the first (the same as this one).',
        },
        offset: {
          type: 'string',
          pattern: '^[0-9]+$',
          description: "The first's offset in that partition, as a decimal string.",
        },
        success: { type: 'boolean', description: "The first's `success`." },
        delivery: {
          type: 'string',
          enum: ['in_doubt'],
          description:
            'Present when ferry gave up on the first and the gateway may have it: look it up before sending again.',
        },
        completed_at: {
          type: 'string',
          format: 'date-time',
          description:
            "When the first was settled: its result's `completed_at`; for a copy answered while the first was still on its way, when the first's answer came (a few ms before its result's).",
        },
      },
      required: ['partition', 'offset', 'success', 'completed_at'],
      additionalProperties: false,
    }),
    expires_at: sometimes({
      type: 'string',
      format: 'date-time',
      description:
        "The command's deadline, when it had one (its `ferry-expires-at` header, or FERRY_EXPIRE_AFTER_MS for its type counted from its record's timestamp): ISO 8601 UTC. With code `expired` it had passed before the command could go out, and the command was never sent.",
    }),
    attempts: {
      schema: {
        type: 'integer',
        minimum: 0,
        description: 'HTTP requests made for the command (0 when it was never sent).',
      },
      required: true,
    },
    completed_at: {
      schema: {
        type: 'string',
        format: 'date-time',
        description: "When ferry settled the command: ISO 8601 UTC, this replica's clock.",
      },
      required: true,
    },
    truncated: sometimes({
      const: true,
      description:
        'The result would not fit `FERRY_RECORD_MAX_BYTES` or a field could not be encoded: its large fields (`data`, `error`, `id`, `type`, `msg_id`, `request_id`, `parts`) hold string previews of their first 1000 characters, or an overlong key was cut.',
    }),
    code: sometimes({
      type: 'string',
      enum: errorCodes,
      description:
        "The class of the failure, for programs: present whenever `success` is false. A failed gateway item gets the code of its text when ferry knows the text (`gateway_sender_rejected` for `Error in Alpha-name`, `gateway_invalid_type`, `gateway_insufficient_balance`, `gateway_message_not_found`), else `gateway_item_error`; `error` keeps the gateway's text either way. Later releases may add `gateway_*` codes: read one you do not know as `gateway_item_error`.",
    }),
    field: sometimes({
      type: 'string',
      description:
        'Validation failures of one field only: the path of the offending field (`sms_lifetime`, `pipeline[1]`, `viber_carousel[0].image`).',
    }),
  },
);
