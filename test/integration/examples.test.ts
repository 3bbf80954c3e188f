/**
 * Every example of examples/ goes through a real ferry, broker and emulator, and gets the
 * result (and dead letter) its file says; every record ferry writes here (results, dead
 * letters, and the status events of the emulator's callbacks) also passes the published
 * schemas, checked by Ajv.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { hookOperationTypes, type OperationType } from '../../src/contract/index.ts';
import type { OutboundRecord } from '../../src/kafka/kafka-client.ts';
import { type CommandExample, loadExamples } from '../../tools/contract/examples.ts';
import { freePort } from '../../tools/kafka/broker.ts';
import {
  produce,
  type ReadRecord,
  readRecords,
  startEmulator,
  startFerry,
} from '../helpers/ferry.ts';
import { loadPublishedSchemas } from '../helpers/published-schemas.ts';

function jsonType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  return typeof value;
}

/**
 * Compares what ferry wrote with what the example expects. At the top level only the fields
 * the example lists are compared (a result may gain optional fields); below it, objects must
 * have exactly the expected keys. A volatile path is compared by JSON type alone.
 */
function compare(
  expected: unknown,
  actual: unknown,
  path: string,
  volatile: ReadonlySet<string>,
  topLevel = false,
): void {
  const where = path === '' ? 'the result' : path;
  if (volatile.has(path)) {
    assert.equal(jsonType(actual), jsonType(expected), `${where}: JSON type`);
    return;
  }
  if (jsonType(expected) === 'object' && jsonType(actual) === 'object') {
    const want = expected as Record<string, unknown>;
    const got = actual as Record<string, unknown>;
    if (!topLevel)
      assert.deepEqual(Object.keys(got).sort(), Object.keys(want).sort(), `${where}: keys`);
    for (const [key, value] of Object.entries(want)) {
      assert.ok(Object.hasOwn(got, key), `${where}: has ${key}`);
      compare(value, got[key], path === '' ? key : `${path}.${key}`, volatile);
    }
    return;
  }
  if (Array.isArray(expected) && Array.isArray(actual)) {
    assert.equal(actual.length, expected.length, `${where}: length`);
    expected.forEach((value, index) => {
      compare(value, actual[index], `${path}.${index}`, volatile);
    });
    return;
  }
  assert.deepEqual(actual, expected, where);
}

function record(topic: string, example: CommandExample): OutboundRecord {
  const value = example.raw_value ?? JSON.stringify(example.command);
  return example.headers
    ? { topic, key: example.key, value, headers: example.headers }
    : { topic, key: example.key, value };
}

/** The examples in waves: each one after the wave holding the example it names in `after`. */
function waves(examples: readonly CommandExample[]): CommandExample[][] {
  const done = new Set<string>();
  const left = [...examples];
  const result: CommandExample[][] = [];
  while (left.length > 0) {
    const wave = left.filter((example) => example.after === undefined || done.has(example.after));
    assert.ok(
      wave.length > 0,
      `examples wait for ones that never come: ${left.map((e) => e.name)}`,
    );
    for (const example of wave) {
      done.add(example.name);
      left.splice(left.indexOf(example), 1);
    }
    result.push(wave);
  }
  return result;
}

test('every example command gets the result its file expects, and every record ferry writes passes the schemas', async (t) => {
  const examples = await loadExamples();
  const keys = new Set(examples.map((example) => example.key));
  assert.equal(keys.size, examples.length, 'example keys are distinct');
  const schemas = await loadPublishedSchemas();
  const validResult = schemas.validator('result.schema.json');
  const validDeadLetterHeaders = schemas.validator('dead-letter.headers.schema.json');

  // Callbacks on: ferry injects its hook into sends, and the emulator's notification address
  // (where `pipeline` statuses go) is ferry's callback route, on a port chosen beforehand.
  const httpPort = await freePort();
  const publicUrl = `http://127.0.0.1:${httpPort}`;
  const token = 'examples-callback-token';
  const emulator = await startEmulator(t, {
    notificationUrl: `${publicUrl}/callbacks/${token}`,
    knobs: { callbackDelayMs: 20 },
  });
  const ferry = await startFerry(t, emulator, {
    FERRY_HTTP_PORT: String(httpPort),
    FERRY_CALLBACK_PUBLIC_URL: publicUrl,
    FERRY_CALLBACK_TOKEN: token,
  });
  let results: ReadRecord[] = [];
  let produced = 0;
  for (const wave of waves(examples)) {
    await produce(
      t,
      wave.map((example) => record(ferry.topics.commands, example)),
    );
    produced += wave.length;
    results = await readRecords(t, ferry.topics.results, produced, { timeoutMs: 60_000 });
  }
  results = await readRecords(t, ferry.topics.results, produced, { settleMs: 1000 });
  assert.equal(results.length, examples.length, 'one result per example, no more');

  for (const example of examples) {
    const mine = results.filter((result) => result.key === example.key);
    assert.equal(mine.length, 1, `${example.name}: one result`);
    const value = mine[0]?.value;
    compare(example.expected_result, value, '', new Set(example.volatile ?? []), true);
    assert.ok(validResult(value), `${example.name}: ${JSON.stringify(validResult.errors)}`);
  }

  const dead = examples.filter((example) => example.expected_dead_letter !== undefined);
  const letters = await readRecords(t, ferry.topics.dlq, dead.length, { settleMs: 1000 });
  assert.equal(letters.length, dead.length, 'a dead letter for each example that expects one');
  for (const example of dead) {
    const letter = letters.find((candidate) => candidate.key === example.key);
    assert.ok(letter, `${example.name}: a dead letter`);
    const headers = Object.fromEntries(
      Object.entries(letter.record.headers).map(([name, value]) => [name, String(value)]),
    );
    for (const [name, value] of Object.entries(example.expected_dead_letter?.headers ?? {})) {
      assert.equal(headers[name], value, `${example.name}: header ${name}`);
    }
    assert.equal(headers['ferry-source-topic'], ferry.topics.commands);
    assert.ok(
      validDeadLetterHeaders(headers),
      `${example.name}: ${JSON.stringify(validDeadLetterHeaders.errors)}`,
    );
    assert.equal(letter.record.value?.toString('utf8') ?? '', record('', example).value);
  }

  // Every message sent with a hook (or, for `pipeline`, to the notification address) gets
  // its delivery callback as a status event keyed by the command's id.
  const validateStatusEvent = schemas.validator('status-event.schema.json');
  const hooked = examples.filter((example) => {
    const type = (example.command as { type?: unknown } | undefined)?.type as OperationType;
    return example.kind === 'valid' && (hookOperationTypes.has(type) || type === 'pipeline');
  });
  assert.ok(hooked.length >= 7, 'the sends with callbacks');
  const events = await readRecords(t, ferry.topics.status, hooked.length, { settleMs: 2000 });
  for (const example of hooked) {
    assert.ok(
      events.some((event) => event.key === example.key),
      `${example.name}: a status event keyed ${example.key}`,
    );
  }
  for (const event of events) {
    assert.ok(
      validateStatusEvent(event.value),
      `${event.key}: ${JSON.stringify(event.value)} ${JSON.stringify(validateStatusEvent.errors)}`,
    );
  }
});
