/**
 * The published JSON Schema of a command record (README, Topics and records: Command): one
 * schema per operation type, derived from the validator's rule tables
 * (src/contract/json-schema.ts), plus what ferry itself adds when it reads a record
 * (command.ts): the id bound and the rules a schema cannot state, in words.
 */
import { fieldDescriptions } from '../contract/field-descriptions.ts';
import {
  type JsonSchema,
  joined,
  operationSchema,
  withDescriptions,
} from '../contract/json-schema.ts';
import { type OperationType, operationTypes } from '../contract/operation-types.ts';
import { MAX_COMMAND_ID } from './command-id.ts';

/** What each operation type does, in a line (docs/gateway-api.md, Operations). */
const summaries: { readonly [K in OperationType]: string } = {
  balance: "Asks for the account's balance; the result's `data` holds `amount` and `currency`.",
  'call/otp':
    'Places a call whose caller number ends with a one-time code; the result carries the answer as `data`.',
  hlr: 'Looks up a number (validity, operator, porting); the result carries the answer as `data`.',
  pipeline:
    'Sends over several channels in turn (`pipeline` names them in order); each named channel has its object. `id` is optional but, without one, ferry cannot look the message up after a lost answer.',
  rcs: 'Sends an RCS message with an image and a button.',
  'rcs+sms': 'Sends an RCS message, and an SMS when RCS delivery fails.',
  'rcs+viber+sms':
    'Sends RCS, then Viber, then SMS; `viber_type` decides which Viber fields are required.',
  sender: "Lists the account's sender names; the result's `data` is the list.",
  sms: 'Sends an SMS. An unknown `sms_signature` fails at the gateway with `Error in Alpha-name`.',
  status: 'Asks for the state of the message the client sent with this `id`; the answer is `data`.',
  telegram: 'Sends a one-time password by Telegram: `message` is the code, 4 to 8 digits.',
  'template/create':
    "Creates an SMS template; the result's `data` is the template the gateway made.",
  'template/delete':
    'Deletes SMS templates matching `id` (a string here) and/or the exact `template` text.',
  'template/list': 'Lists the SMS templates.',
  'template/viber/create':
    'Creates a Viber template. Its fields are not documented by the gateway: ferry checks only the common ones and passes the rest through.',
  'template/viber/delete':
    'Deletes a Viber template. Its fields are not documented by the gateway: ferry checks only the common ones.',
  'template/viber/list': 'Lists the Viber templates.',
  viber:
    'Sends a Viber message. The gateway documents no required field or `viber_type` value for it, so ferry checks only the JSON types.',
  'viber+sms':
    'Sends Viber, then SMS when Viber fails. Its fields are not documented by the gateway: ferry checks only the common ones and passes the rest through.',
  voice:
    'Sends a voice message. Its fields are not documented by the gateway: ferry checks only the common ones and passes the rest through.',
};

/** What every command schema leaves to ferry's own reader, in words (docs/contract.md lists the same). */
export const rulesBeyondSchema = [
  'The record value must be UTF-8 JSON of at most FERRY_COMMAND_MAX_BYTES bytes (default 1048576), nesting objects and arrays at most FERRY_COMMAND_MAX_DEPTH levels (default 32); a record over either is refused before it is parsed and dead-lettered.',
  'URL fields are checked with the WHATWG URL parser after an http:// or https:// prefix test; `format: uri` (RFC 3986) disagrees with it on rare inputs such as unescaped spaces or non-ASCII characters.',
  'The `ferry-transport` header must name an endpoint this deployment has configured (FERRY_ASYNC_BASE_URL for async).',
  "Numeric ids must be at most 2^53 - 1 in magnitude: larger numbers lose digits in JSON parsers, ferry's too, so a parser may round one into range before a schema sees it.",
  'Phone numbers are not normalised: a phone is the JSON integer the gateway takes, and `"+79001234567"` is refused, not repaired.',
  'The record key is not checked; results and dead letters copy it, so keep it `String(id)` to correlate them.',
  'The gateway checks more than ferry does: a sender name must be registered (`Error in Alpha-name`), the balance must cover the send, and fields it does not document are its business alone.',
] as const;

/** ids are looked up by `status` after a lost answer: one that JSON parsers round could find another message. */
const idBound = { minimum: -MAX_COMMAND_ID, maximum: MAX_COMMAND_ID } as const;

/** The schema of a command of one operation type. */
export function commandSchema(type: OperationType): JsonSchema {
  const schema = operationSchema(type);
  const properties = withDescriptions(
    schema.properties as Record<string, JsonSchema>,
    (path) => fieldDescriptions[`${type}:${path}`] ?? fieldDescriptions[path],
  );
  const id = properties.id;
  if (id !== undefined && id.type === 'number') {
    properties.id = {
      ...id,
      ...idBound,
      description: joined(
        id.description as string | undefined,
        'The record key should be `String(id)`. ferry refuses ids beyond 2^53 - 1 (JSON parsers lose their digits) and looks messages up by id after a lost answer, so keep it unique.',
      ),
    };
  }
  return {
    title: `ferry command: ${type}`,
    description: `${summaries[type]} Properties not listed are passed to the gateway unchanged.`,
    ...schema,
    properties,
  };
}

/** The file-name form of an operation type: `template/viber/create` → `template-viber-create`. */
export function operationSlug(type: OperationType): string {
  return type.replaceAll(/[/+]/g, '-');
}

/** The umbrella schema: a command is exactly one of the per-type schemas, found at `refOf(type)`. */
export function anyCommandSchema(refOf: (type: OperationType) => string): JsonSchema {
  return {
    title: 'ferry command',
    description: [
      'The value of a `ferry.commands` record: one operation object exactly as the gateway takes it, chosen by `type`. Key: `String(id)` (any string when there is no id); the result carries the same key.',
      'What JSON Schema cannot state, and ferry checks or leaves to the gateway:',
      ...rulesBeyondSchema.map((rule) => `- ${rule}`),
    ].join('\n'),
    type: 'object',
    required: ['type'],
    properties: {
      type: {
        type: 'string',
        enum: [...operationTypes],
        description: 'The operation type: it picks the schema the rest of the command follows.',
      },
    },
    oneOf: operationTypes.map((type) => ({ $ref: refOf(type) })),
  };
}
