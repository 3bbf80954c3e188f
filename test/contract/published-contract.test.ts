/**
 * The published contract (schemas/, examples/) against the code: the checked-in files are
 * what the generator makes now, an independent validator (Ajv) agrees with ferry's own on
 * the examples and on variations of every operation type, and the examples' README names
 * the invalid examples only ferry catches.
 */
import assert from 'node:assert/strict';
import { readdir, readFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { test } from 'node:test';
import { operationTypes, validateOperation } from '../../src/contract/index.ts';
import { ruleSchema } from '../../src/contract/json-schema.ts';
import { operationSlug } from '../../src/pipeline/command-schema.ts';
import { contractFiles, SCHEMAS_DIR } from '../../tools/contract/contract-files.ts';
import { examplesDir, loadExamples, repoRoot } from '../../tools/contract/examples.ts';
import { schemaFiles } from '../../tools/contract/schema-files.ts';
import { validOperations } from '../fixtures/operations.ts';
import { loadPublishedSchemas } from '../helpers/published-schemas.ts';

async function checkedInFiles(): Promise<string[]> {
  const dir = join(repoRoot, SCHEMAS_DIR);
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries
    .filter((entry) => entry.isFile())
    .map((entry) => relative(repoRoot, join(entry.parentPath, entry.name)))
    .sort();
}

test('schemas/ is what `make contract` makes from the code and examples/ (run it after changing either)', async () => {
  const generated = await contractFiles();
  assert.deepEqual(await checkedInFiles(), [...generated.keys()].sort());
  for (const [path, text] of generated) {
    assert.equal(await readFile(join(repoRoot, path), 'utf8'), text, `${path} is stale`);
  }
});

test('every schema file compiles in Ajv strict mode (draft 2020-12)', async () => {
  const schemas = await loadPublishedSchemas();
  assert.ok(schemas.paths.length >= 26, `${schemas.paths.length} schema files`);
  for (const path of schemas.paths) assert.equal(typeof schemas.validator(path), 'function', path);
});

/** Paths of the properties of a schema that have no description, nested ones too. */
function undescribed(schema: Record<string, unknown>, prefix: string): string[] {
  const properties = (schema.properties ?? {}) as Record<string, Record<string, unknown>>;
  return Object.entries(properties).flatMap(([name, inner]) => {
    const own = typeof inner.description === 'string' ? [] : [`${prefix}${name}`];
    const nested = (inner.items ?? inner) as Record<string, unknown>;
    return [...own, ...undescribed(nested, `${prefix}${name}.`)];
  });
}

test('every field of every published command and record schema says what it means', () => {
  const missing = schemaFiles().flatMap((file) => undescribed(file.standalone, `${file.path}: `));
  assert.deepEqual(missing, []);
});

test('a rule option the generator does not know fails generation instead of vanishing from the schema', () => {
  assert.throws(
    () => ruleSchema({ kind: 'string', maxLength: 5 } as never),
    /rule kind string has property maxLength/,
  );
});

test('there is one valid example per operation type', async () => {
  const examples = await loadExamples();
  const types = new Set(
    examples
      .filter((example) => example.kind === 'valid')
      .map((example) => (example.command as { type?: unknown }).type),
  );
  assert.deepEqual([...types].sort(), [...operationTypes].sort());
});

test('Ajv, reading the checked-in schemas, accepts every valid example and refuses the invalid ones the README says it refuses', async () => {
  const schemas = await loadPublishedSchemas();
  const command = schemas.validator('command.schema.json');
  const headers = schemas.validator('command.headers.schema.json');
  const result = schemas.validator('result.schema.json');
  const schemaMisses: string[] = [];
  for (const example of await loadExamples()) {
    assert.ok(result(example.expected_result), `${example.name}: expected_result passes`);
    const headersPass = headers(example.headers ?? {});
    let value: unknown = example.command;
    let parsed = example.raw_value === undefined;
    if (!parsed) {
      try {
        value = JSON.parse(example.raw_value ?? '');
        parsed = true;
      } catch {
        // Not a JSON document: no JSON Schema can judge it.
      }
    }
    const passes = parsed && headersPass && command(value);
    if (example.kind === 'valid') {
      assert.ok(passes, `${example.name}: ${JSON.stringify(command.errors ?? headers.errors)}`);
      const type = (value as { type: (typeof operationTypes)[number] }).type;
      const own = schemas.validator(`commands/${operationSlug(type)}.schema.json`);
      assert.ok(own(value), `${example.name} passes its own type's schema`);
      assert.equal(validateOperation(value).ok, true, `${example.name}: ferry's validator`);
    } else {
      // A value that is not a JSON document is refused by ferry alone: no schema judged it.
      const caught = parsed && !passes;
      assert.equal(caught, example.schema_catches, `${example.name}: schema_catches`);
      if (!example.schema_catches) schemaMisses.push(example.name);
    }
  }
  const readme = await readFile(join(examplesDir, 'README.md'), 'utf8');
  const section = readme.split('## Only ferry catches these')[1]?.split('\n## ')[0] ?? '';
  const listed = [...section.matchAll(/`invalid\/([a-z0-9-]+)\.json`/g)].map((match) => match[1]);
  assert.deepEqual(listed.sort(), schemaMisses.sort(), 'examples/README.md lists them');
});

/** Values of every JSON kind, to put in place of a field. */
const replacements: readonly unknown[] = [
  null,
  true,
  0,
  -1,
  59,
  60,
  3599,
  3600,
  259_200,
  259_201,
  1.5,
  999_999_999_999_999,
  1_000_000_000_000_000,
  '',
  'text',
  '4821',
  '123',
  '123456789',
  'https://example.com/a',
  'ftp://example.com/a',
  '2026-11-23T19:20:05+00:00',
  [],
  ['sms'],
  ['sms', 'sms'],
  ['rcs'],
  ['fax'],
  [{}],
  [{ image: 'not a url' }],
  {},
  { message: 'x', signature: 'y', type: 'text' },
  { gender: 'robot', language: 'en', name: 'x' },
];

/** The given operation with one field removed or replaced, for every field and replacement. */
function variations(operation: Readonly<Record<string, unknown>>): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  const fields = new Set([
    ...Object.keys(operation),
    'id',
    'phone',
    'hook',
    'viber_type',
    'viber_image',
    'viber_carousel',
    'sms',
    'viber',
    'voice',
    'telegram',
    'whatsapp',
    'sms_lifetime',
    'telegram_lifetime',
    'rcs_lifetime',
  ]);
  for (const field of fields) {
    if (field === 'type') continue;
    const { [field]: _removed, ...without } = operation;
    out.push(without);
    for (const value of replacements) out.push({ ...operation, [field]: value });
  }
  return out;
}

test("ferry's validator and Ajv with the published schema agree on thousands of variations of every operation type", async () => {
  const schemas = await loadPublishedSchemas();
  const command = schemas.validator('command.schema.json');
  const examples = await loadExamples();
  const starts = [
    ...Object.values(validOperations),
    ...examples.flatMap((example) =>
      example.kind === 'valid' ? [example.command as Record<string, unknown>] : [],
    ),
  ];
  let checked = 0;
  const disagreements: string[] = [];
  for (const start of starts) {
    for (const variation of variations(start)) {
      checked += 1;
      const ferry = validateOperation(variation);
      if (ferry.ok !== command(variation)) {
        disagreements.push(
          `${JSON.stringify(variation)}: ferry ${ferry.ok ? 'accepts' : `refuses (${ferry.message})`}, the schema ${ferry.ok ? 'refuses' : 'accepts'}`,
        );
      }
    }
  }
  assert.ok(checked > 10_000, `${checked} variations`);
  assert.deepEqual(disagreements.slice(0, 10), []);
});

test('the documented disagreement holds: unescaped spaces and non-ASCII characters in a URL pass ferry and fail the schema', async () => {
  const schemas = await loadPublishedSchemas();
  const command = schemas.validator('command.schema.json');
  for (const image of ['https://cdn.example.com/a b.png', 'https://cdn.example.com/ü.png']) {
    const rcs = { ...validOperations.rcs, rcs_image: image };
    assert.equal(validateOperation(rcs).ok, true, image);
    assert.equal(command(rcs), false, image);
  }
});
