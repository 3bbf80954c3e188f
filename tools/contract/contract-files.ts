/**
 * Everything `make contract` writes, as repository paths and their text: the JSON Schemas
 * and the AsyncAPI document under schemas/. Built in memory, so the drift test compares it
 * with the checked-in files without writing anything.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { asyncApiDocument } from './asyncapi.ts';
import { loadExamples, repoRoot } from './examples.ts';
import { jsonText, schemaFiles, standaloneSchema } from './schema-files.ts';

/** The folder of the published contract, relative to the repository. */
export const SCHEMAS_DIR = 'schemas';

export async function contractFiles(): Promise<Map<string, string>> {
  const files = new Map<string, string>();
  for (const file of schemaFiles()) {
    files.set(`${SCHEMAS_DIR}/${file.path}`, jsonText(standaloneSchema(file)));
  }
  const pkg = JSON.parse(await readFile(join(repoRoot, 'package.json'), 'utf8')) as {
    version: string;
  };
  files.set(
    `${SCHEMAS_DIR}/asyncapi.json`,
    jsonText(asyncApiDocument(pkg.version, await loadExamples())),
  );
  return files;
}
