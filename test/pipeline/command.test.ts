import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { InboundRecord } from '../../src/kafka/kafka-client.ts';
import {
  type CommandReaderOptions,
  type InvalidCommand,
  readCommand,
} from '../../src/pipeline/command.ts';
import { ID_RANGE_ERROR } from '../../src/pipeline/command-id.ts';
import { encodeResult } from '../../src/pipeline/output-records.ts';
import { validationResult } from '../../src/pipeline/result.ts';
import { validOperations } from '../fixtures/operations.ts';

const options: CommandReaderOptions = {
  defaultTransport: 'sync',
  transports: new Set(['sync', 'async'] as const),
};

function record(value: string | null, headers: Record<string, string> = {}): InboundRecord {
  return {
    topic: 'ferry.commands',
    partition: 0,
    offset: '7',
    key: Buffer.from('k'),
    value: value === null ? null : Buffer.from(value),
    headers,
    timestamp: '0',
  };
}

test('a valid command keeps its own JSON text, untouched', () => {
  const text = JSON.stringify({ ...validOperations.sms, extra: { kept: true } });
  const command = readCommand(record(text), options);
  assert.equal(command.kind, 'valid');
  assert.equal(command.kind === 'valid' && command.json, text);
  assert.equal(command.transport, 'sync');
});

test('unreadable records are invalid and marked for the dead-letter topic', () => {
  for (const [value, rule] of [
    [null, 'not_json'],
    ['{oops', 'not_json'],
    ['[1,2]', 'not_object'],
    ['"text"', 'not_object'],
  ] as const) {
    const command = readCommand(record(value), options);
    assert.equal(command.kind, 'invalid');
    assert.equal(command.kind === 'invalid' && command.rule, rule);
    assert.equal(command.kind === 'invalid' && command.unreadable, true);
  }
  const bytes = readCommand({ ...record(null), value: Buffer.from([0xff, 0xfe, 0x7b]) }, options);
  assert.equal(bytes.kind === 'invalid' && bytes.unreadable, true);
});

test('a rule violation names the field and keeps id and type for the result', () => {
  const command = readCommand(
    record(JSON.stringify({ ...validOperations.sms, sms_lifetime: 5 })),
    options,
  );
  assert.equal(command.kind, 'invalid');
  if (command.kind !== 'invalid') return;
  assert.match(command.error, /^sms_lifetime: /);
  assert.equal(command.unreadable, false);
  assert.equal(command.type, 'sms');
  assert.equal(command.id, validOperations.sms.id);
});

test('the ferry-transport header picks the transport, and a bad value is refused', () => {
  const text = JSON.stringify(validOperations.sms);
  assert.equal(
    readCommand(record(text, { 'ferry-transport': 'async' }), options).transport,
    'async',
  );
  const bad = readCommand(record(text, { 'ferry-transport': 'fax' }), options);
  assert.equal(bad.kind === 'invalid' && bad.error, 'ferry-transport: must be sync or async');
  const unconfigured = readCommand(record(text, { 'ferry-transport': 'async' }), {
    ...options,
    transports: new Set(['sync'] as const),
  });
  assert.equal(unconfigured.kind, 'invalid');
});

test('prepare may add fields; they are spliced into the record text, every other byte kept', () => {
  // `1.0`, `\u00e9`, a `__proto__` key and an unusual key order do not survive JSON.stringify.
  const text = `{ "sms_message":"caf\\u00e9", "type":"sms", "id":${validOperations.sms.id}, "phone":${validOperations.sms.phone}, "sms_signature":"${validOperations.sms.sms_signature}", "__proto__":{"x":1}, "extra":1.0 }\n`;
  const hook = 'https://ferry.example.com/callbacks/t';
  const command = readCommand(record(text), {
    ...options,
    prepare: (operation) => {
      operation.hook = hook;
      return true;
    },
  });
  assert.equal(command.kind, 'valid', command.kind === 'invalid' ? command.error : '');
  const json = command.kind === 'valid' ? command.json : '';
  const close = text.lastIndexOf('}');
  assert.equal(json, `${text.slice(0, close)},"hook":"${hook}"${text.slice(close)}`);
  assert.equal(JSON.parse(json).hook, hook);
});

test('prepare that declines leaves the text as it is', () => {
  const text = JSON.stringify({ ...validOperations.sms, hook: 'https://own.example.com/h' });
  const command = readCommand(record(text), { ...options, prepare: () => false });
  assert.equal(command.kind === 'valid' && command.json, text);
});

test('a record value over FERRY_COMMAND_MAX_BYTES is refused unparsed and dead-lettered', () => {
  const text = JSON.stringify({ ...validOperations.sms, sms_message: 'x'.repeat(2000) });
  const command = readCommand(record(text), { ...options, maxBytes: 1024 });
  assert.equal(command.kind, 'invalid');
  if (command.kind !== 'invalid') return;
  assert.equal(
    command.error,
    `the record value is ${Buffer.byteLength(text)} bytes; the limit is 1024 (FERRY_COMMAND_MAX_BYTES)`,
  );
  assert.equal(command.rule, 'too_large');
  assert.equal(command.unreadable, true);
  assert.equal(command.id, undefined);
  const fits = readCommand(record(JSON.stringify(validOperations.sms)), {
    ...options,
    maxBytes: 1024,
  });
  assert.equal(fits.kind, 'valid');
});

test('nesting deeper than FERRY_COMMAND_MAX_DEPTH is refused before parsing, in any field', () => {
  const deep = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`;
  const base = JSON.stringify(validOperations.sms);
  for (const field of ['id', 'type', 'phone', 'sms_message', 'extra']) {
    const text = base.replace('{', `{"${field}":${deep(100_000)},`);
    const command = readCommand(record(text), options);
    assert.equal(command.kind, 'invalid', field);
    if (command.kind !== 'invalid') continue;
    assert.equal(command.rule, 'too_deep');
    assert.equal(command.unreadable, true);
    assert.equal(
      command.error,
      'the record value nests objects and arrays deeper than 32 levels (FERRY_COMMAND_MAX_DEPTH)',
    );
  }
  // 32 levels in all (the operation is the first) pass the limit; 33 do not.
  const atLimit = base.replace('{', `{"extra":${deep(31)},`);
  assert.equal(readCommand(record(atLimit), options).kind, 'valid');
  const over = base.replace('{', `{"extra":${deep(32)},`);
  assert.equal(readCommand(record(over), options).kind, 'invalid');
  // Brackets inside strings are text, not nesting.
  const inText = JSON.stringify({ ...validOperations.sms, sms_message: '['.repeat(1000) });
  assert.equal(readCommand(record(inText), options).kind, 'valid');
  assert.equal(readCommand(record(over), { ...options, maxDepth: 40 }).kind, 'valid');
});

test('every valid operation of the contract is within the default depth with room to spare', () => {
  for (const [type, operation] of Object.entries(validOperations)) {
    const command = readCommand(record(JSON.stringify(operation)), { ...options, maxDepth: 4 });
    assert.notEqual(command.kind === 'invalid' && command.rule, 'too_deep', type);
  }
});

test('__proto__ and constructor keys stay own data: validation judges the fields it knows', () => {
  const polluted = readCommand(
    record(JSON.stringify(validOperations.sms).replace('{', '{"__proto__":{"polluted":true},')),
    options,
  );
  assert.equal(polluted.kind, 'valid');
  assert.equal(({} as Record<string, unknown>).polluted, undefined);
  const only = readCommand(record('{"__proto__":{"type":"sms","id":1}}'), options);
  assert.equal(only.kind, 'invalid');
  assert.equal(only.kind === 'invalid' && only.unreadable, false);
});

test('ids beyond 2^53 - 1 either way are refused naming the field: they would collide once parsed', () => {
  for (const id of ['9007199254740993', '9007199254740992', '-9007199254740993', '1e20']) {
    const text = JSON.stringify(validOperations.sms).replace(/"id":\d+/, `"id":${id}`);
    const command = readCommand(record(text), options);
    assert.equal(command.kind, 'invalid', id);
    if (command.kind !== 'invalid') continue;
    assert.equal(command.error, ID_RANGE_ERROR, id);
    assert.equal(command.rule, 'range', id);
    assert.equal(command.field, 'id', id);
    assert.equal(command.unreadable, false, id);
  }
  assert.match(ID_RANGE_ERROR, /^id: must be between -9007199254740991 and 9007199254740991 /);
  for (const id of [Number.MAX_SAFE_INTEGER, -Number.MAX_SAFE_INTEGER]) {
    const safe = JSON.stringify({ ...validOperations.sms, id });
    assert.equal(readCommand(record(safe), options).kind, 'valid', String(id));
  }
});

test('the result of a refused id repeats it with every digit, not as JSON.parse rounded it', () => {
  const written = (id: string, operation: object = validOperations.sms) => {
    const text = JSON.stringify(operation).replace(/"id":\d+/, `"id":${id}`);
    const command = readCommand(record(text), options);
    assert.equal(command.kind, 'invalid', id);
    return JSON.parse(
      encodeResult(validationResult(command as InvalidCommand), 1_000_000),
      (key, value, context?: { source?: string }) => (key === 'id' ? context?.source : value),
    ) as Record<string, unknown>;
  };
  const result = written('9007199254740993');
  assert.equal(result.id, '9007199254740993');
  assert.equal(result.code, 'validation');
  assert.equal(result.field, 'id');
  assert.equal(result.error, ID_RANGE_ERROR);
  assert.equal(written('-9007199254740993').id, '-9007199254740993');
  // Refused for another rule first, the result still names the id the command had.
  const { phone: _phone, ...noPhone } = validOperations.sms as Record<string, unknown>;
  const other = written('9007199254740995', noPhone);
  assert.equal(other.id, '9007199254740995');
  assert.equal(other.field, 'phone');
  // A number no double holds (Infinity once parsed) was written as null before.
  assert.equal(written('1e400').id, '1e400');
  // Exact ids are repeated as they are.
  assert.equal(written('42', noPhone).id, '42');
});
