import assert from 'node:assert/strict';
import { test } from 'node:test';
import { exactNumber } from '../../src/json/number-source.ts';
import type { InboundRecord } from '../../src/kafka/kafka-client.ts';
import { type Command, readCommand } from '../../src/pipeline/command.ts';
import { readCommandGuarded } from '../../src/pipeline/last-resort.ts';
import {
  buildOutputRecords,
  DEFAULT_RECORD_MAX_BYTES,
  deadLetterRecord,
  encodeResult,
  PREVIEW_CHARS,
  previewJson,
  previewOf,
  resultRecord,
} from '../../src/pipeline/output-records.ts';
import { type Result, validationResult } from '../../src/pipeline/result.ts';
import { validOperations } from '../fixtures/operations.ts';

const topics = { results: 'ferry.results', dlq: 'ferry.dlq' };

function record(value: string | Buffer | null, extra: Partial<InboundRecord> = {}): InboundRecord {
  return {
    topic: 'ferry.commands',
    partition: 2,
    offset: '41',
    key: Buffer.from('k1'),
    value: typeof value === 'string' ? Buffer.from(value) : value,
    headers: { trace: 't-1' },
    timestamp: '0',
    ...extra,
  };
}

const readerOptions = { defaultTransport: 'sync' as const, transports: new Set(['sync'] as const) };

function result(fields: Partial<Result> = {}): Result {
  return {
    success: false,
    stage: 'validation',
    transport: 'sync',
    attempts: 0,
    completed_at: '2030-01-01T00:00:00.000Z',
    ...fields,
  };
}

/** An array nested `depth` levels, built without recursion. */
function deepArray(depth: number): unknown[] {
  let value: unknown[] = [];
  for (let i = 1; i < depth; i++) value = [value];
  return value;
}

function recordBytes(r: { key: unknown; value: unknown; headers?: Record<string, unknown> }) {
  const size = (v: unknown) =>
    v === null || v === undefined
      ? 0
      : Buffer.isBuffer(v)
        ? v.length
        : Buffer.byteLength(String(v));
  let bytes = size(r.key) + size(r.value);
  for (const [name, value] of Object.entries(r.headers ?? {})) bytes += size(name) + size(value);
  return bytes;
}

test('a result that fits is encoded exactly as JSON.stringify does', () => {
  const value = result({ id: 7, type: 'sms', error: 'sms_lifetime: too short' });
  assert.equal(encodeResult(value, DEFAULT_RECORD_MAX_BYTES), JSON.stringify(value));
});

test('a 100,000-deep id does not throw: it becomes a preview and the result says truncated', () => {
  const deep = deepArray(100_000);
  assert.throws(() => JSON.stringify(deep), RangeError);
  const text = encodeResult(result({ id: deep, type: 'sms' }), DEFAULT_RECORD_MAX_BYTES);
  const parsed = JSON.parse(text) as Record<string, unknown>;
  assert.equal(parsed.truncated, true);
  assert.equal(parsed.id, `${'['.repeat(PREVIEW_CHARS)}…`);
  assert.equal(parsed.type, 'sms', 'small fields stay as they were');
  assert.deepEqual(
    [parsed.success, parsed.stage, parsed.transport, parsed.attempts],
    [false, 'validation', 'sync', 0],
  );
});

test('a result over the cap has its large fields cut to previews and stays under the cap', () => {
  const big = result({
    id: 'i'.repeat(600_000),
    type: { huge: 't'.repeat(300_000) },
    error: 'e'.repeat(300_000),
    data: ['d'.repeat(300_000)],
    msg_id: 5,
  });
  const text = encodeResult(big, DEFAULT_RECORD_MAX_BYTES);
  assert.ok(Buffer.byteLength(text) <= DEFAULT_RECORD_MAX_BYTES);
  const parsed = JSON.parse(text) as Record<string, unknown>;
  assert.equal(parsed.truncated, true);
  assert.equal(parsed.id, `${'i'.repeat(PREVIEW_CHARS)}…`, 'a string keeps its beginning');
  assert.equal(parsed.error, `${'e'.repeat(PREVIEW_CHARS)}…`);
  assert.equal(
    parsed.type,
    `${`{"huge":"${'t'.repeat(PREVIEW_CHARS)}`.slice(0, PREVIEW_CHARS)}…`,
    'other values keep the beginning of their JSON text',
  );
  assert.equal(typeof parsed.data, 'string');
  assert.equal(parsed.msg_id, 5, 'small fields are not cut');
});

test('an id kept with every digit is written as its digits, whole or as a preview', () => {
  const id = exactNumber('9007199254740993');
  assert.match(encodeResult(result({ id }), DEFAULT_RECORD_MAX_BYTES), /"id":9007199254740993[,}]/);
  // Too long to keep whole: the preview is the beginning of the number's own text.
  const long = '1'.repeat(5000);
  const text = encodeResult(result({ id: exactNumber(long), data: 'x'.repeat(2000) }), 3000);
  const cut = JSON.parse(text) as Record<string, unknown>;
  assert.equal(cut.truncated, true);
  assert.equal(cut.id, `${long.slice(0, PREVIEW_CHARS)}…`);
  assert.equal(previewJson([exactNumber('-1e400')], 100), '[-1e400]');
});

test('a cap smaller than the previews still gives a valid result naming the cap', () => {
  const text = encodeResult(result({ id: 'x'.repeat(5000), success: false }), 300);
  const parsed = JSON.parse(text) as Record<string, unknown>;
  assert.equal(parsed.truncated, true);
  assert.equal(parsed.stage, 'validation');
  assert.match(String(parsed.error), /FERRY_RECORD_MAX_BYTES/);
  assert.ok(Buffer.byteLength(text) <= 300);
});

test('previews are bounded, work at any depth and never throw', () => {
  assert.equal(
    previewJson({ a: [1, 'x', null, true], b: {} }, 100),
    '{"a":[1,"x",null,true],"b":{}}',
  );
  assert.equal(previewJson(deepArray(1_000_000), 5), '[[[[[');
  assert.equal(previewJson(Number.NaN, 10), 'null');
  assert.equal(previewOf('short'), 'short');
  assert.equal(previewOf({ a: 1 }), '{"a":1}');
  const hostile = new Proxy(
    {},
    {
      ownKeys() {
        throw new Error('no');
      },
    },
  );
  assert.equal(previewJson(hostile, 10), '');
});

test('the result record is keyed like the command; an overlong key is cut and flagged', () => {
  const normal = resultRecord('r', record('{}'), result(), DEFAULT_RECORD_MAX_BYTES);
  assert.deepEqual(normal.key, Buffer.from('k1'));
  const longKey = record('{}', { key: Buffer.alloc(600_000, 0x6b) });
  const cut = resultRecord('r', longKey, result(), DEFAULT_RECORD_MAX_BYTES);
  assert.equal((cut.key as Buffer).length, DEFAULT_RECORD_MAX_BYTES / 4);
  assert.equal((JSON.parse(String(cut.value)) as Result).truncated, true);
  assert.ok(recordBytes(cut) <= DEFAULT_RECORD_MAX_BYTES);
});

test('a dead letter that fits carries the whole record and the source headers', () => {
  const source = record('{oops');
  const dead = deadLetterRecord(
    'dlq',
    source,
    'the record value is not UTF-8 JSON',
    1_000_000,
    'unsent',
  );
  assert.deepEqual(dead.value, source.value);
  assert.deepEqual(dead.headers, {
    trace: 't-1',
    'ferry-error': 'the record value is not UTF-8 JSON',
    'ferry-delivery': 'unsent',
    'ferry-source-topic': 'ferry.commands',
    'ferry-source-partition': '2',
    'ferry-source-offset': '41',
  });
});

test('a dead letter over the cap has its value cut and says so in its headers', () => {
  const cap = 100_000;
  const value = Buffer.alloc(cap - 10, 0x61);
  const dead = deadLetterRecord('dlq', record(value), 'e'.repeat(5000), cap, 'in_doubt');
  assert.ok(recordBytes(dead) <= cap, `${recordBytes(dead)} bytes`);
  assert.equal(dead.headers?.['ferry-truncated'], 'true');
  assert.equal(dead.headers?.['ferry-original-bytes'], String(value.length));
  assert.equal(dead.headers?.['ferry-source-offset'], '41');
  assert.equal(dead.headers?.trace, 't-1');
  assert.ok((dead.value as Buffer).length > cap / 2, 'the value keeps what fits');
  assert.equal(String(dead.headers?.['ferry-error']).length, 1001, 'the error header is bounded');
});

test('source headers larger than a quarter of the cap are dropped from the dead letter', () => {
  const cap = 100_000;
  const dead = deadLetterRecord(
    'dlq',
    record('{}', { headers: { big: 'h'.repeat(cap) } }),
    'not_json',
    cap,
    'unsent',
  );
  assert.equal(dead.headers?.big, undefined);
  assert.equal(dead.headers?.['ferry-truncated'], 'true');
  assert.deepEqual(dead.value, Buffer.from('{}'));
  assert.ok(recordBytes(dead) <= cap);
});

test('output records: one result per command and dead letters for unreadable ones, in order', () => {
  const commands = [
    readCommand(record(JSON.stringify(validOperations.sms)), readerOptions),
    readCommand(record('[[[['), readerOptions),
    readCommand(record(JSON.stringify({ type: 'sms', id: 'z'.repeat(2_000_000) })), {
      ...readerOptions,
      maxBytes: 4 * 1024 * 1024,
    }),
  ];
  const internal: unknown[] = [];
  const output = buildOutputRecords(
    commands,
    (command) =>
      command.kind === 'invalid'
        ? validationResult(command)
        : result({ success: true, stage: 'upstream', id: command.id, type: command.type }),
    { topics, maxBytes: DEFAULT_RECORD_MAX_BYTES, onInternalError: (_c, e) => internal.push(e) },
  );
  assert.deepEqual(internal, []);
  assert.deepEqual(
    output.records.map((r) => r.topic),
    ['ferry.results', 'ferry.results', 'ferry.dlq', 'ferry.results'],
  );
  assert.deepEqual(output.deadLetterReasons, ['not_json']);
  const huge = JSON.parse(String(output.records[3]?.value)) as Record<string, unknown>;
  assert.equal(huge.truncated, true);
  assert.equal(huge.id, `${'z'.repeat(PREVIEW_CHARS)}…`, 'the huge id still shows its beginning');
  for (const r of output.records) assert.ok(recordBytes(r) <= DEFAULT_RECORD_MAX_BYTES);
});

test('a command whose output cannot be built gets an internal-error result and a dead letter', () => {
  const commands = [
    readCommand(record(JSON.stringify(validOperations.sms)), readerOptions),
    readCommand(record(JSON.stringify({ ...validOperations.sms, id: 2 })), readerOptions),
  ];
  const internal: Command[] = [];
  const output = buildOutputRecords(
    commands,
    (command, index) => {
      if (index === 0) throw new Error('boom');
      return result({ success: true, stage: 'upstream', id: command.id });
    },
    {
      topics,
      maxBytes: DEFAULT_RECORD_MAX_BYTES,
      onInternalError: (command) => {
        internal.push(command);
        throw new Error('the reporter fails too');
      },
    },
  );
  assert.equal(internal.length, 1);
  assert.deepEqual(
    output.records.map((r) => r.topic),
    ['ferry.results', 'ferry.dlq', 'ferry.results'],
  );
  assert.deepEqual(output.deadLetterReasons, ['internal']);
  const first = JSON.parse(String(output.records[0]?.value)) as Record<string, unknown>;
  assert.deepEqual(
    [first.success, first.stage, first.error],
    [false, 'validation', 'internal error: boom'],
  );
  assert.equal(output.records[1]?.headers?.['ferry-error'], 'internal error: boom');
  assert.equal(output.results.length, 2);
  assert.equal(output.results[1]?.success, true);
});

test('a reader that throws gives an invalid command with rule internal, dead-lettered', () => {
  const seen: unknown[] = [];
  const command = readCommandGuarded(
    record('{}'),
    readerOptions,
    (_record, error) => seen.push(error),
    () => {
      throw new RangeError('Maximum call stack size exceeded');
    },
  );
  assert.equal(seen.length, 1);
  assert.equal(command.kind, 'invalid');
  if (command.kind !== 'invalid') return;
  assert.equal(command.rule, 'internal');
  assert.equal(command.unreadable, true);
  assert.equal(command.error, 'internal error: Maximum call stack size exceeded');
  const output = buildOutputRecords([command], (c) => validationResult(c as never), {
    topics,
    maxBytes: DEFAULT_RECORD_MAX_BYTES,
    onInternalError: () => undefined,
  });
  assert.deepEqual(output.deadLetterReasons, ['internal']);
  // Without a failure the guarded reader is readCommand.
  const plain = readCommandGuarded(record(JSON.stringify(validOperations.sms)), readerOptions, () =>
    assert.fail('no internal error expected'),
  );
  assert.equal(plain.kind, 'valid');
});

test('every failed result carries a code and its dead letter the same code', () => {
  const invalidCommands = [
    // A rule broken deep inside: the result names the field in bracket form.
    [{ ...validOperations.pipeline, pipeline: ['sms', 'email'] }, 'validation', 'pipeline[1]'],
    [{ ...validOperations.pipeline, pipeline: [] }, 'validation', 'pipeline'],
    [{ ...validOperations.sms, sms_lifetime: 1 }, 'validation', 'sms_lifetime'],
    [{ ...validOperations.sms, id: 2 ** 60 }, 'validation', 'id'],
  ] as const;
  for (const [operation, code, field] of invalidCommands) {
    const command = readCommand(record(JSON.stringify(operation)), readerOptions);
    assert.equal(command.kind, 'invalid');
    if (command.kind !== 'invalid') continue;
    const failed = validationResult(command);
    assert.deepEqual([failed.code, failed.field], [code, field], command.error);
  }
  const whatsapp = readCommand(record(JSON.stringify({ type: 'whatsapp', id: 1 })), readerOptions);
  assert.ok(whatsapp.kind === 'invalid');
  assert.deepEqual(
    [validationResult(whatsapp).error, validationResult(whatsapp).field],
    ['Invalid message type', 'type'],
  );

  const unreadable = [
    readCommand(record('{not json'), readerOptions),
    readCommand(record('x'.repeat(100)), { ...readerOptions, maxBytes: 10 }),
  ];
  const output = buildOutputRecords(unreadable, (c) => validationResult(c as never), {
    topics,
    maxBytes: DEFAULT_RECORD_MAX_BYTES,
    onInternalError: () => undefined,
  });
  const codes = output.results.map((r) => [r.success, r.code, r.field]);
  assert.deepEqual(codes, [
    [false, 'validation', undefined],
    [false, 'too_large', undefined],
  ]);
  const dead = output.records.filter((r) => r.topic === topics.dlq);
  assert.deepEqual(
    dead.map((r) => r.headers?.['ferry-error-code']),
    ['validation', 'too_large'],
  );
  const values = output.records
    .filter((r) => r.topic === topics.results)
    .map((r) => JSON.parse(String(r.value)) as Result);
  assert.deepEqual(
    values.map((v) => v.code),
    ['validation', 'too_large'],
  );
});

test('a result cut to its smallest form keeps its code', () => {
  const text = encodeResult(result({ error: 'x'.repeat(5000), code: 'in_doubt' }), 200);
  assert.equal((JSON.parse(text) as Result).code, 'in_doubt');
});

test('results carry the allow-listed trace headers of their command; dead letters drop invalid ones', () => {
  const traceparent = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
  const allow = ['traceparent', 'tracestate', 'correlation-id'];
  const traced = record('{not json', {
    headers: { traceparent, tracestate: 'a=b', 'correlation-id': 'c-1', trace: 't-1' },
  });
  const broken = record('{not json', {
    headers: { traceparent: 'junk', tracestate: 'a=b', 'correlation-id': 'c-2' },
  });
  const output = buildOutputRecords(
    [readCommand(traced, readerOptions), readCommand(broken, readerOptions)],
    (c) => validationResult(c as never),
    {
      topics,
      maxBytes: DEFAULT_RECORD_MAX_BYTES,
      onInternalError: () => undefined,
      propagateHeaders: allow,
    },
  );
  const [result1, dead1, result2, dead2] = output.records;
  assert.deepEqual(result1?.headers, { traceparent, tracestate: 'a=b', 'correlation-id': 'c-1' });
  assert.deepEqual(result2?.headers, { 'correlation-id': 'c-2' });
  assert.equal(dead1?.headers?.traceparent, traceparent);
  assert.equal(dead1?.headers?.trace, 't-1', 'a dead letter keeps every other header');
  assert.equal(dead2?.headers?.traceparent, undefined);
  assert.equal(dead2?.headers?.tracestate, undefined);
  assert.equal(dead2?.headers?.['correlation-id'], 'c-2');
  const none = resultRecord('r', traced, result(), DEFAULT_RECORD_MAX_BYTES);
  assert.equal(none.headers, undefined, 'nothing travels without an allow-list');
});

test('resultPartition: results go to their command partition number, dead letters keep their key hash', () => {
  const commands = [
    readCommand(record(JSON.stringify(validOperations.sms)), readerOptions),
    readCommand(record('[[[['), readerOptions),
  ];
  const build = (resultPartition: number | undefined) =>
    buildOutputRecords(
      commands,
      (command) =>
        command.kind === 'invalid'
          ? validationResult(command)
          : result({ success: true, stage: 'upstream', id: command.id, type: command.type }),
      {
        topics,
        maxBytes: DEFAULT_RECORD_MAX_BYTES,
        onInternalError: () => undefined,
        resultPartition,
      },
    );
  assert.deepEqual(
    build(2).records.map((r) => [r.topic, r.partition]),
    [
      ['ferry.results', 2],
      ['ferry.results', 2],
      ['ferry.dlq', undefined],
    ],
  );
  assert.deepEqual(
    build(undefined).records.map((r) => r.partition),
    [undefined, undefined, undefined],
    'by default the key decides',
  );
});
