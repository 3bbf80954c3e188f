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
} from '../../src/pipeline/headers-schema.ts';
import { resultSchema } from '../../src/pipeline/result-schema.ts';

/**
 * The base of every schema's `$id`: an identifier that lets the files refer to each other
 * by relative paths, not an address they are served from (they live in this repository).
 */
export const SCHEMA_ID_BASE = 'https://ferry.example.com/schemas/';
export const DRAFT_2020_12 = 'https://json-schema.org/draft/2020-12/schema';

/** A schema of schemas/: its path under schemas/, its name in the AsyncAPI components, and its body. */
export interface SchemaFile {
  readonly path: string;
  readonly component: string;
  readonly schema: JsonSchema;
}

/** Path under schemas/ of an operation type's command schema. */
export function commandSchemaPath(type: OperationType): string {
  return `commands/${operationSlug(type)}.schema.json`;
}

/** Every schema, with `$ref`s between them as paths relative to schemas/. */
export function schemaFiles(): SchemaFile[] {
  return [
    {
      path: 'command.schema.json',
      component: 'command',
      schema: anyCommandSchema(commandSchemaPath),
    },
    ...operationTypes.map((type) => ({
      path: commandSchemaPath(type),
      component: `command.${operationSlug(type)}`,
      schema: commandSchema(type),
    })),
    {
      path: 'command.headers.schema.json',
      component: 'commandHeaders',
      schema: commandHeadersSchema,
    },
    { path: 'result.schema.json', component: 'result', schema: resultSchema },
    { path: 'status-event.schema.json', component: 'statusEvent', schema: statusEventSchema() },
    {
      path: 'output.headers.schema.json',
      component: 'outputHeaders',
      schema: outputHeadersSchema,
    },
    {
      path: 'dead-letter.headers.schema.json',
      component: 'deadLetterHeaders',
      schema: deadLetterHeadersSchema,
    },
  ];
}

/**
 * A schema as its own draft 2020-12 document: `$schema`, an `$id` under SCHEMA_ID_BASE, and
 * `$ref`s resolved relative to it (`commands/sms.schema.json` from the command schema).
 */
export function standaloneSchema(file: SchemaFile): JsonSchema {
  const refs = relativeRefs(file.path);
  return {
    $schema: DRAFT_2020_12,
    $id: `${SCHEMA_ID_BASE}${file.path}`,
    ...rewriteRefs(file.schema, refs),
  };
}

/** Turns paths relative to schemas/ into paths relative to the folder of `fromPath`. */
function relativeRefs(fromPath: string): (ref: string) => string {
  const depth = fromPath.split('/').length - 1;
  return (ref) => `${'../'.repeat(depth)}${ref}`;
}

/** A copy of `value` with every `$ref` passed through `map`. */
export function rewriteRefs(value: JsonSchema, map: (ref: string) => string): JsonSchema {
  return rewrite(value, map) as JsonSchema;
}

function rewrite(value: unknown, map: (ref: string) => string): unknown {
  if (Array.isArray(value)) return value.map((item) => rewrite(item, map));
  if (typeof value !== 'object' || value === null) return value;
  const copy: Record<string, unknown> = {};
  for (const [key, inner] of Object.entries(value)) {
    copy[key] = key === '$ref' && typeof inner === 'string' ? map(inner) : rewrite(inner, map);
  }
  return copy;
}

/** JSON text as the checked-in files hold it. */
export function jsonText(value: unknown): string {
  return `${JSON.stringify(value, null, 2)}\n`;
}
