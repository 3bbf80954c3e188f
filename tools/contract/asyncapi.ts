/**
 * schemas/asyncapi.json: every topic ferry reads or writes as an AsyncAPI 3.0 channel, with
 * its key, headers, payload schema (the same schemas as schemas/*.schema.json, embedded
 * under components.schemas) and examples taken from examples/.
 */
import type { JsonSchema } from '../../src/json/record-schema.ts';
import type { CommandExample } from './examples.ts';
import { type SchemaFile, schemaFiles } from './schema-files.ts';

const KAFKA_BINDING_VERSION = '0.5.0';

/** A reference to a component schema by its name. */
function schemaRef(component: string): JsonSchema {
  return { $ref: `#/components/schemas/${component}` };
}

/** Kafka message binding: what the record key holds. */
function keyBinding(description: string): JsonSchema {
  return { kafka: { key: { type: 'string', description }, bindingVersion: KAFKA_BINDING_VERSION } };
}

/** The payload of records whose value is bytes ferry does not define. */
const bytesPayload = (description: string): JsonSchema => ({
  type: 'string',
  format: 'binary',
  description,
});

/** Placeholders for the source headers of a dead-letter example (their values depend on where it ran). */
const exampleSource = {
  'ferry-source-topic': 'ferry.commands',
  'ferry-source-partition': '0',
  'ferry-source-offset': '42',
};

/** Status events as docs/callbacks.md shows them: a delivery, a Viber reply, a refused async request. */
const finalStatusEventExamples = [
  {
    name: 'byPoll',
    summary: 'No callback came within FERRY_STATUS_POLL_AFTER_MS: ferry asked `status`.',
    payload: {
      id: '4101',
      msg_id: 'a8f2c41e',
      type: 'sms',
      status: 'DELIVERED',
      success: true,
      channel: 'sms',
      updated: '2026-11-27T12:00:04+00:00',
      source: 'poll',
      sent_at: '2026-11-27T12:00:01.220Z',
      final_at: '2026-11-27T12:10:02.031Z',
      command: { topic: 'ferry.commands', partition: 3, offset: '1842' },
      detail: {
        id: 4101,
        msg_id: 'a8f2c41e',
        type: 'sms',
        status: 'DELIVERED',
        updated: '2026-11-27T12:00:04+00:00',
      },
    },
  },
  {
    name: 'givenUp',
    summary: 'Neither a callback nor a lookup gave a final status within the last bound.',
    payload: {
      id: '4102',
      msg_id: 'b91d07aa',
      type: 'viber',
      status: 'UNKNOWN',
      success: false,
      source: 'give_up',
      sent_at: '2026-11-25T12:00:01.500Z',
      final_at: '2026-11-27T12:00:02.118Z',
      command: { topic: 'ferry.commands', partition: 0, offset: '77' },
    },
  },
];

const statusEventExamples = [
  {
    name: 'sms-delivered',
    summary: 'The delivery callback of the sms example, keyed 1007',
    payload: {
      success: true,
      id: '1007',
      msg_id: '1795462098499007',
      type: 'sms',
      status: 'DELIVERED',
      updated: '2026-11-23T19:28:24+00:00',
      received_at: '2026-11-23T19:28:24.512Z',
    },
  },
  {
    name: 'viber-reply',
    summary: 'A Viber 2 Way reply with an attachment, keyed 2001',
    payload: {
      success: true,
      id: '2001',
      msg_id: '9001',
      type: 'viber',
      status: 'REPLIED',
      updated: '2024-05-01T10:00:00+02:00',
      replies: [
        { datetime: '2024-05-01T10:00:01+02:00', message: 'Yes' },
        {
          datetime: '2024-05-01T10:00:02+02:00',
          media: { url: 'https://media.example/r/1.jpg', filename: '1.jpg', filesize: 12345 },
        },
      ],
      received_at: '2024-05-01T08:00:02.511Z',
    },
  },
  {
    name: 'async-rejected',
    summary: 'A refused async request: no id, keyed by its request_id',
    payload: {
      success: false,
      status: 'REJECTED',
      error: 'Insufficient balance',
      updated: '2024-05-01T10:00:00+00:00',
      request_id: 'req-abc',
      received_at: '2024-05-01T10:00:00.120Z',
    },
  },
];

function commandExamples(examples: readonly CommandExample[]): JsonSchema[] {
  return examples
    .filter((example) => example.kind === 'valid' && example.command !== undefined)
    .map((example) => ({
      name: example.name,
      summary: example.description,
      ...(example.headers ? { headers: example.headers } : {}),
      payload: example.command,
    }));
}

function resultExamples(examples: readonly CommandExample[]): JsonSchema[] {
  return examples.map((example) => ({
    name: example.name,
    summary: `The result of: ${example.description}`,
    payload: example.expected_result,
  }));
}

function deadLetterExamples(examples: readonly CommandExample[]): JsonSchema[] {
  return examples.flatMap((example) =>
    example.expected_dead_letter === undefined
      ? []
      : [
          {
            name: example.name,
            summary: `The dead letter of: ${example.description}`,
            headers: {
              ...example.headers,
              ...example.expected_dead_letter.headers,
              ...exampleSource,
            },
            payload: example.raw_value ?? JSON.stringify(example.command),
          },
        ],
  );
}

/** The component schemas: every schema file, as the document embeds it. */
function componentSchemas(files: readonly SchemaFile[]): Record<string, JsonSchema> {
  return Object.fromEntries(files.map((file) => [file.component, file.embedded]));
}

/** The AsyncAPI 3.0 document of ferry's topics. */
export function asyncApiDocument(version: string, examples: readonly CommandExample[]): JsonSchema {
  return {
    asyncapi: '3.0.0',
    info: {
      title: 'ferry',
      version,
      description:
        "ferry's Kafka contract: applications produce commands and read exactly one result per command, the delivery status events, and the dead letters. Topic names are the defaults; each is configurable (`FERRY_TOPIC_*`). All values are UTF-8 JSON unless said otherwise; keys are strings. Read results and status events with isolation level read_committed. See docs/contract.md.",
    },
    defaultContentType: 'application/json',
    servers: {
      kafka: {
        host: '127.0.0.1:9092',
        protocol: 'kafka',
        description:
          'The local development broker (`make kafka-up`); production brokers are `FERRY_KAFKA_BROKERS`.',
      },
    },
    channels: {
      commands: {
        address: 'ferry.commands',
        title: 'Commands',
        description:
          'Send commands, one operation object per record (`FERRY_TOPIC_COMMANDS`). Records of any Kafka codec are read.',
        messages: { command: { $ref: '#/components/messages/command' } },
      },
      results: {
        address: 'ferry.results',
        title: 'Results',
        description:
          "Exactly one result per command record, same key, in the order of a partition's commands; written in Kafka transactions (`FERRY_TOPIC_RESULTS`).",
        messages: { result: { $ref: '#/components/messages/result' } },
      },
      status: {
        address: 'ferry.status',
        title: 'Status events',
        description:
          "The gateway's delivery-status callbacks, one record per distinct callback (`FERRY_TOPIC_STATUS`).",
        messages: { statusEvent: { $ref: '#/components/messages/statusEvent' } },
      },
      finalStatus: {
        address: 'ferry.status.final',
        title: 'Final status events',
        description:
          'Exactly one event per message sent, from its callback, a `status` lookup or given up (`FERRY_TOPIC_STATUS_FINAL`, with `FERRY_STATUS_TRACKING=true`); written in Kafka transactions.',
        messages: { finalStatusEvent: { $ref: '#/components/messages/finalStatusEvent' } },
      },
      deadLetters: {
        address: 'ferry.dlq',
        title: 'Dead letters',
        description:
          'The original record of every command that ended at stage `transport`, was over a limit, was not a JSON object, or that ferry failed on (`FERRY_TOPIC_DLQ`). `ferryctl dlq replay` sends them back to the commands topic.',
        messages: { deadLetter: { $ref: '#/components/messages/deadLetter' } },
      },
      unparsedCallbacks: {
        address: 'ferry.callbacks.unparsed',
        title: 'Unparsed callbacks',
        description:
          'The raw bodies of callbacks ferry received but could not map to a status event, kept for inspection instead of lost (`FERRY_TOPIC_UNPARSED_CALLBACKS`).',
        messages: { unparsedCallback: { $ref: '#/components/messages/unparsedCallback' } },
      },
    },
    operations: {
      readCommands: {
        action: 'receive',
        title: 'ferry reads commands',
        channel: { $ref: '#/channels/commands' },
        messages: [{ $ref: '#/channels/commands/messages/command' }],
      },
      writeResults: {
        action: 'send',
        title: 'ferry writes one result per command',
        channel: { $ref: '#/channels/results' },
        messages: [{ $ref: '#/channels/results/messages/result' }],
      },
      writeStatusEvents: {
        action: 'send',
        title: 'ferry writes status events',
        channel: { $ref: '#/channels/status' },
        messages: [{ $ref: '#/channels/status/messages/statusEvent' }],
      },
      writeFinalStatusEvents: {
        action: 'send',
        title: 'ferry writes one final status event per message sent',
        channel: { $ref: '#/channels/finalStatus' },
        messages: [{ $ref: '#/channels/finalStatus/messages/finalStatusEvent' }],
      },
      writeDeadLetters: {
        action: 'send',
        title: 'ferry writes dead letters',
        channel: { $ref: '#/channels/deadLetters' },
        messages: [{ $ref: '#/channels/deadLetters/messages/deadLetter' }],
      },
      writeUnparsedCallbacks: {
        action: 'send',
        title: 'ferry keeps callbacks it could not map',
        channel: { $ref: '#/channels/unparsedCallbacks' },
        messages: [{ $ref: '#/channels/unparsedCallbacks/messages/unparsedCallback' }],
      },
    },
    components: {
      schemas: componentSchemas(schemaFiles()),
      messages: {
        command: {
          name: 'command',
          title: 'Command',
          contentType: 'application/json',
          headers: schemaRef('commandHeaders'),
          payload: schemaRef('command'),
          bindings: keyBinding(
            'By convention `String(id)` (any string when the command has no id); the result carries the same key.',
          ),
          examples: commandExamples(examples),
        },
        result: {
          name: 'result',
          title: 'Result',
          contentType: 'application/json',
          headers: schemaRef('outputHeaders'),
          payload: schemaRef('result'),
          bindings: keyBinding(
            "The command record's key (cut when it is over a quarter of `FERRY_RECORD_MAX_BYTES`).",
          ),
          examples: resultExamples(examples),
        },
        statusEvent: {
          name: 'statusEvent',
          title: 'Status event',
          contentType: 'application/json',
          headers: schemaRef('outputHeaders'),
          payload: schemaRef('statusEvent'),
          bindings: keyBinding(
            "The callback's `id` (the client's message id), else `msg_id`, else `request_id`.",
          ),
          examples: statusEventExamples,
        },
        finalStatusEvent: {
          name: 'finalStatusEvent',
          title: 'Final status event',
          contentType: 'application/json',
          // Written without headers today; the shared schema says a reader may expect none.
          headers: schemaRef('outputHeaders'),
          payload: schemaRef('finalStatusEvent'),
          bindings: keyBinding(
            "The command's `id`, else the message's `msg_id`, else its `request_id`.",
          ),
          examples: finalStatusEventExamples,
        },
        deadLetter: {
          name: 'deadLetter',
          title: 'Dead letter',
          contentType: 'application/octet-stream',
          headers: schemaRef('deadLetterHeaders'),
          payload: bytesPayload(
            "The command record's value, unchanged (cut to fit when `ferry-truncated` is true). Usually a command as in the commands channel, but not always JSON: unreadable records are dead-lettered too.",
          ),
          bindings: keyBinding("The command record's key."),
          examples: deadLetterExamples(examples),
        },
        unparsedCallback: {
          name: 'unparsedCallback',
          title: 'Unparsed callback',
          contentType: 'application/octet-stream',
          headers: schemaRef('unparsedCallbackHeaders'),
          payload: bytesPayload(
            'The body of the callback request, byte for byte (only its beginning when `ferry-truncated`). The record has no key: nothing in it identified a message.',
          ),
        },
      },
    },
  };
}
