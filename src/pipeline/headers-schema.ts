/**
 * The published JSON Schemas of the Kafka headers ferry writes (README, Topics and records),
 * as objects of header name to UTF-8 string value. The dead letter's value is the command
 * record's own value (bytes, unchanged or cut), so its contract is in its headers.
 */
import type { JsonSchema } from '../json/record-schema.ts';
import { RFC3339_PATTERN } from './command-deadline.ts';
import { errorCodes } from './result.ts';

/** W3C trace context, copied from the command to what ferry writes about it. */
const traceHeaders: Record<string, JsonSchema> = {
  traceparent: {
    type: 'string',
    pattern: '^[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$',
    description: 'W3C Trace Context `traceparent` of the command, copied when it had one.',
  },
  tracestate: {
    type: 'string',
    description: 'W3C Trace Context `tracestate` of the command, copied when it had one.',
  },
};

const decimal = { type: 'string', pattern: '^[0-9]+$' } as const;

/** Headers of a command record that ferry reads; any other header is carried, not read. */
export const commandHeadersSchema: JsonSchema = {
  title: 'ferry command headers',
  description:
    'Kafka headers of a command record. Other headers are allowed; a dead letter keeps them all, and replay sends them again.',
  type: 'object',
  properties: {
    'ferry-transport': {
      type: 'string',
      enum: ['sync', 'async'],
      description:
        'The endpoint for this command, overriding `FERRY_TRANSPORT`. Any other value is a `validation` result (`ferry-transport: must be sync or async`); naming an endpoint that is not configured is one too.',
    },
    'ferry-expires-at': {
      type: 'string',
      format: 'date-time',
      // The format alone is not asserted by every validator; the pattern is.
      pattern: RFC3339_PATTERN,
      description:
        "The command's deadline, RFC 3339 with an offset or `Z` (`2026-11-27T12:03:10Z`): a command whose turn comes after it is answered `expired` and never sent, by no retry, takeover or replay either. Overrides the default of `FERRY_EXPIRE_AFTER_MS` for its type. Any other value is a `validation` result (rule `expires_header`). A dead letter carries the deadline a default gave it in this header, so a replay keeps it.",
    },
    ...traceHeaders,
  },
  additionalProperties: { type: 'string' },
};

/** Headers of a result or status event record. */
export const outputHeadersSchema: JsonSchema = {
  title: 'ferry result and status event headers',
  description:
    'Kafka headers of result and status event records: the trace context of the command and an allow-list of its other headers, when ferry copies them. A reader must not depend on any being present.',
  type: 'object',
  properties: { ...traceHeaders },
  additionalProperties: { type: 'string' },
};

/** Headers of a dead letter: the command's own headers plus ferry's. */
export const deadLetterHeadersSchema: JsonSchema = {
  title: 'ferry dead letter headers',
  description:
    "Kafka headers of a dead letter. Its key and value are the command record's (the value cut to fit `FERRY_RECORD_MAX_BYTES` when `ferry-truncated` says so); its headers are the command's own (`ferry-transport` too) plus these. A dead letter whose command headers would take more than a quarter of the limit keeps only ferry's.",
  type: 'object',
  properties: {
    'ferry-error': {
      type: 'string',
      description:
        "The result's `error` (its first 1000 characters and `…` when longer); `internal error: …` when ferry failed on the record.",
    },
    'ferry-delivery': {
      type: 'string',
      enum: ['unsent', 'in_doubt'],
      description:
        'As `delivery` in the result. Unreadable records (not JSON, not an object, over a limit) are `unsent`. `ferryctl dlq replay` replays `in_doubt` ones only with `--include-in-doubt`.',
    },
    'ferry-expires-at': {
      type: 'string',
      format: 'date-time',
      description:
        "The command's deadline: its own header, or the one `FERRY_EXPIRE_AFTER_MS` gave it (ISO 8601 UTC), so that a replay after it is answered `expired` instead of sent late.",
    },
    'ferry-source-topic': { type: 'string', description: 'The commands topic it was read from.' },
    'ferry-source-partition': { ...decimal, description: 'Its partition there.' },
    'ferry-source-offset': { ...decimal, description: 'Its offset there.' },
    'ferry-truncated': {
      const: 'true',
      description:
        'Present when the dead letter was cut to fit; the whole record stays in the commands topic at the source offset, and replay skips it.',
    },
    'ferry-original-bytes': {
      ...decimal,
      description: "With `ferry-truncated`: the byte length of the command's value.",
    },
    'ferry-error-code': {
      type: 'string',
      enum: errorCodes,
      description: "The result's `code` (older dead letters may lack it).",
    },
    ...traceHeaders,
  },
  required: [
    'ferry-error',
    'ferry-delivery',
    'ferry-source-topic',
    'ferry-source-partition',
    'ferry-source-offset',
  ],
  additionalProperties: { type: 'string' },
};

/** Headers of an unparsed-callback record (the callback receiver writes them). */
export const unparsedCallbackHeadersSchema: JsonSchema = {
  title: 'ferry unparsed callback headers',
  description:
    'Kafka headers of a record on the unparsed-callbacks topic: what the callback request was labelled, when it came, why it is not a status event, plus the trace context its callback URL carried.',
  type: 'object',
  properties: {
    'ferry-content-type': {
      type: 'string',
      description: "The request's Content-Type as sent; absent when it sent none.",
    },
    'ferry-received-at': {
      type: 'string',
      format: 'date-time',
      description: 'When ferry received it, ISO 8601 UTC.',
    },
    'ferry-reason': {
      type: 'string',
      description: 'Why it is not a status event (`not JSON`, `success: is required`, …).',
    },
    'ferry-truncated': {
      const: 'true',
      description: 'The body was over the size limit: only its beginning is kept.',
    },
    'ferry-original-bytes': {
      ...decimal,
      description: "With `ferry-truncated`: the body's declared length.",
    },
    ...traceHeaders,
  },
  required: ['ferry-received-at', 'ferry-reason'],
  additionalProperties: { type: 'string' },
};
