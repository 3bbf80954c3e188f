/**
 * The example commands of examples/ (see examples/README.md): their file format and loader,
 * shared by the generator (AsyncAPI message examples) and the tests that run and validate them.
 */
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';

export const repoRoot = join(import.meta.dirname, '../..');
export const examplesDir = join(repoRoot, 'examples');

/** One example: a command record as an application produces it, and what ferry answers. */
export interface CommandExample {
  /** The file name without `.json`, unique across examples/. */
  readonly name: string;
  /** `valid` (examples/commands) or `invalid` (examples/invalid). */
  readonly kind: 'valid' | 'invalid';
  readonly description: string;
  /** The record key. */
  readonly key: string;
  /** The record's Kafka headers. */
  readonly headers?: Readonly<Record<string, string>>;
  /** The record value as JSON; exactly one of `command` and `raw_value` is present. */
  readonly command?: unknown;
  /** The record value as text, for values that are not a JSON document. */
  readonly raw_value?: string;
  /** An example whose result must be written before this one is produced (a `status` looks up a send). */
  readonly after?: string;
  /** The result record's value: every field listed must be there with this value, except `volatile` ones. */
  readonly expected_result: Readonly<Record<string, unknown>>;
  /** Dotted paths into `expected_result` whose value changes from run to run: only their presence and JSON type are compared. */
  readonly volatile?: readonly string[];
  /** When the command is also dead-lettered: headers the dead letter must carry, with these values. */
  readonly expected_dead_letter?: { readonly headers: Readonly<Record<string, string>> };
  /** Invalid examples: whether the published JSON Schemas refuse it too (false: only ferry's reader does). */
  readonly schema_catches?: boolean;
}

const fileKeys = new Set([
  'description',
  'key',
  'headers',
  'command',
  'raw_value',
  'after',
  'expected_result',
  'volatile',
  'expected_dead_letter',
  'schema_catches',
]);

function checked(name: string, kind: CommandExample['kind'], value: unknown): CommandExample {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new Error(`examples/${name}: not a JSON object`);
  }
  const fields = value as Record<string, unknown>;
  for (const key of Object.keys(fields)) {
    if (!fileKeys.has(key)) throw new Error(`examples/${name}: unknown field ${key}`);
  }
  if (typeof fields.description !== 'string' || typeof fields.key !== 'string') {
    throw new Error(`examples/${name}: description and key must be strings`);
  }
  if ('command' in fields === 'raw_value' in fields) {
    throw new Error(`examples/${name}: exactly one of command and raw_value`);
  }
  if (typeof fields.expected_result !== 'object' || fields.expected_result === null) {
    throw new Error(`examples/${name}: expected_result must be an object`);
  }
  if ((kind === 'invalid') !== (typeof fields.schema_catches === 'boolean')) {
    throw new Error(`examples/${name}: schema_catches is required on invalid examples only`);
  }
  return { ...(fields as Omit<CommandExample, 'name' | 'kind'>), name, kind };
}

async function loadFolder(folder: string, kind: CommandExample['kind']): Promise<CommandExample[]> {
  const dir = join(examplesDir, folder);
  const names = (await readdir(dir)).filter((file) => file.endsWith('.json')).sort();
  return Promise.all(
    names.map(async (file) =>
      checked(
        file.slice(0, -'.json'.length),
        kind,
        JSON.parse(await readFile(join(dir, file), 'utf8')),
      ),
    ),
  );
}

/** Every example, valid ones first, each folder in file-name order. */
export async function loadExamples(): Promise<CommandExample[]> {
  const examples = [
    ...(await loadFolder('commands', 'valid')),
    ...(await loadFolder('invalid', 'invalid')),
  ];
  const names = new Set(examples.map((example) => example.name));
  if (names.size !== examples.length) throw new Error('examples: a file name is used twice');
  for (const example of examples) {
    if (example.after !== undefined && !names.has(example.after)) {
      throw new Error(`examples/${example.name}: after names no example (${example.after})`);
    }
  }
  return examples;
}
