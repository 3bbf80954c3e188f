/**
 * schemas/asyncapi.json read by the AsyncAPI project's own parser (@asyncapi/parser): it
 * validates the document against the AsyncAPI 3.0 specification, resolves its references
 * and checks every message example against its payload and headers schemas.
 */
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { test } from 'node:test';
import { DiagnosticSeverity, Parser } from '@asyncapi/parser';
import { Ajv } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { repoRoot } from '../../tools/contract/examples.ts';

// ajv-formats is CommonJS whose typings declare an ES default export; at run time the
// default import is the plugin function itself.
const addFormats = addFormatsModule as unknown as typeof addFormatsModule.default;

const documentPath = join(repoRoot, 'schemas/asyncapi.json');

async function parse(text: string) {
  const { document, diagnostics } = await new Parser().parse(text);
  const problems = diagnostics
    .filter(
      (diagnostic) =>
        diagnostic.severity === DiagnosticSeverity.Error ||
        diagnostic.severity === DiagnosticSeverity.Warning,
    )
    .map(
      (diagnostic) => `${diagnostic.code} at ${diagnostic.path.join('.')}: ${diagnostic.message}`,
    );
  return { document, problems };
}

test('the AsyncAPI document parses without errors or warnings and has a channel per topic', async () => {
  const { document, problems } = await parse(await readFile(documentPath, 'utf8'));
  assert.deepEqual(problems, []);
  assert.ok(document, 'a document');
  assert.equal(document.version(), '3.0.0');
  assert.deepEqual(
    document
      .channels()
      .all()
      .map((channel) => channel.address())
      .sort(),
    [
      'ferry.callbacks.unparsed',
      'ferry.commands',
      'ferry.dlq',
      'ferry.results',
      'ferry.status',
      'ferry.status.final',
    ],
  );
  for (const message of document.messages().all()) {
    assert.ok(message.hasPayload(), `${message.id()} has a payload`);
    assert.ok(message.hasHeaders(), `${message.id()} has headers`);
  }
  const command = document
    .messages()
    .all()
    .find((message) => message.id() === 'command');
  assert.ok(
    (command?.examples().all().length ?? 0) >= 20,
    'one command example per operation type',
  );
});

/**
 * The examples of every message, checked against the message's payload and headers as the
 * parser resolved them. The parser does not do this itself for AsyncAPI 3 (its example rule
 * exists for 2.x only), so Ajv does, in draft-07 mode: AsyncAPI's schema dialect.
 */
async function exampleProblems(text: string): Promise<string[]> {
  const { document, problems } = await parse(text);
  assert.deepEqual(problems, []);
  assert.ok(document);
  const ajv = new Ajv({ allErrors: true, strict: false });
  addFormats(ajv);
  ajv.addFormat('binary', true);
  const found: string[] = [];
  for (const message of document.messages().all()) {
    const payload = ajv.compile(message.payload()?.json() ?? {});
    const headers = ajv.compile(message.headers()?.json() ?? {});
    for (const example of message.examples().all()) {
      if (example.hasPayload() && !payload(example.payload())) {
        found.push(`${message.id()}/${example.name()}: payload ${ajv.errorsText(payload.errors)}`);
      }
      if (example.hasHeaders() && !headers(example.headers())) {
        found.push(`${message.id()}/${example.name()}: headers ${ajv.errorsText(headers.errors)}`);
      }
    }
  }
  return found;
}

test('every message example fits its payload and headers schemas, and one that does not is caught', async () => {
  const text = await readFile(documentPath, 'utf8');
  assert.deepEqual(await exampleProblems(text), []);
  const broken = JSON.parse(text) as {
    components: { messages: { result: { examples: { payload: Record<string, unknown> }[] } } };
  };
  const example = broken.components.messages.result.examples[0];
  assert.ok(example);
  example.payload.stage = 'somewhere';
  const found = await exampleProblems(JSON.stringify(broken));
  assert.equal(found.length, 1, found.join('\n'));
  assert.match(found[0] ?? '', /^result\/.*payload.*stage/);
});
