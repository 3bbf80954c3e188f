/**
 * The JSON Schema files of schemas/ (draft 2020-12), one per record type and one per
 * operation type, built from the modules that own each record. `make contract` writes them;
 * test/contract/published-contract.test.ts checks the checked-in copies are current.
 */
import { statusEventSchema } from '../../src/callbacks/status-event-schema.ts';
import { type OperationType, operationTypes } from '../../src/contract/operation-types.ts';
import type { JsonSchema } from '../../src/json/record-schema.ts';
import {
  anyCommandSchema,
  commandSchema,
  operationSlug,
} from '../../src/pipeline/command-schema.ts';
import {
  commandHeadersSchema,
  deadLetterHeadersSchema,
  outputHeadersSchema,
  unparsedCallbackHeadersSchema,
} from '../../src/pipeline/headers-schema.ts';
import { resultSchema } from '../../src/pipeline/result-schema.ts';
import { finalStatusEventSchema } from '../../src/tracking/final-status-schema.ts';

/**
 * The base of every schema's `$id`: an identifier, not an address the files are served from
 * (they live in this repository).
 */
export const SCHEMA_ID_BASE = 'https://ferry.example.com/schemas/';
export const DRAFT_2020_12 = 'https://json-schema.org/draft/2020-12/schema';

/**
 * A schema of schemas/: its path there, its name among the AsyncAPI components, its body as
 * the AsyncAPI document embeds it (references point at other components), and its body as
 * its own file (self-contained: references stay inside the file, under `$defs`).
 */
export interface SchemaFile {
  readonly path: string;
  readonly component: string;
  readonly embedded: JsonSchema;
  readonly standalone: JsonSchema;
}

/** Path under schemas/ of an operation type's command schema. */
export function commandSchemaPath(type: OperationType): string {
  return `commands/${operationSlug(type)}.schema.json`;
}

/** The AsyncAPI component name of an operation type's command schema. */
function commandComponent(type: OperationType): string {
  return `command.${operationSlug(type)}`;
}

/** A schema without references: the same in the AsyncAPI document and in its file. */
function plain(path: string, component: string, schema: JsonSchema): SchemaFile {
  return { path, component, embedded: schema, standalone: schema };
}

/**
 * Every schema. The command schema's file carries every operation type's schema under
 * `$defs` rather than referring to the other files: a reference within one document
 * resolves the same in every validator, while references between files depend on how
 * each tool resolves relative `$id`s (an old Python resolver, for one, gets them wrong).
 */
export function schemaFiles(): SchemaFile[] {
  return [
    {
      path: 'command.schema.json',
      component: 'command',
      embedded: anyCommandSchema((type) => `#/components/schemas/${commandComponent(type)}`),
      standalone: {
        ...anyCommandSchema((type) => `#/$defs/${operationSlug(type)}`),
        $defs: Object.fromEntries(
          operationTypes.map((type) => [operationSlug(type), commandSchema(type)]),
        ),
      },
    },
    ...operationTypes.map((type) =>
      plain(commandSchemaPath(type), commandComponent(type), commandSchema(type)),
    ),
    plain('command.headers.schema.json', 'commandHeaders', commandHeadersSchema),
    plain('result.schema.json', 'result', resultSchema),
    plain('status-event.schema.json', 'statusEvent', statusEventSchema()),
    plain('final-status-event.schema.json', 'finalStatusEvent', finalStatusEventSchema()),
    plain('output.headers.schema.json', 'outputHeaders', outputHeadersSchema),
    plain('dead-letter.headers.schema.json', 'deadLetterHeaders', deadLetterHeadersSchema),
    plain(
      'unparsed-callback.headers.schema.json',
      'unparsedCallbackHeaders',
      unparsedCallbackHeadersSchema,
    ),
  ];
}

/** A schema as its own draft 2020-12 document: `$schema` and an `$id` under SCHEMA_ID_BASE. */
export function standaloneSchema(file: SchemaFile): JsonSchema {
  return { $schema: DRAFT_2020_12, $id: `${SCHEMA_ID_BASE}${file.path}`, ...file.standalone };
}

/** JSON text as the checked-in files hold it. */
export function jsonText(value: unknown): string {
  return `${JSON.stringify(value, null, 2)}\n`;
}
