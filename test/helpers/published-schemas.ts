/**
 * The checked-in schemas/ files loaded into Ajv (draft 2020-12, with ajv-formats): an
 * independent validator reading the published artefacts, not the code that made them.
 */
import { readdir, readFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { SCHEMA_ID_BASE } from '../../tools/contract/schema-files.ts';

const schemasDir = join(import.meta.dirname, '../../schemas');

// ajv-formats is CommonJS whose typings declare an ES default export; at run time the
// default import is the plugin function itself.
const addFormats = addFormatsModule as unknown as typeof addFormatsModule.default;

export interface PublishedSchemas {
  /** The validator of a schema file, by its path under schemas/ (`result.schema.json`). */
  validator(path: string): ValidateFunction;
  /** Every `*.schema.json` path under schemas/. */
  readonly paths: readonly string[];
}

export async function loadPublishedSchemas(): Promise<PublishedSchemas> {
  // strictRequired off: `then: { required: [...] }` names properties defined beside the `if`, as it should.
  const ajv = new Ajv2020({ allErrors: true, strict: true, strictRequired: false });
  addFormats(ajv);
  const entries = await readdir(schemasDir, { recursive: true, withFileTypes: true });
  const paths = entries
    .filter((entry) => entry.isFile() && entry.name.endsWith('.schema.json'))
    .map((entry) => relative(schemasDir, join(entry.parentPath, entry.name)))
    .sort();
  for (const path of paths) {
    ajv.addSchema(JSON.parse(await readFile(join(schemasDir, path), 'utf8')) as object);
  }
  return {
    paths,
    validator(path) {
      const validate = ajv.getSchema(`${SCHEMA_ID_BASE}${path}`);
      if (validate === undefined) throw new Error(`no schema ${path}`);
      return validate;
    },
  };
}
