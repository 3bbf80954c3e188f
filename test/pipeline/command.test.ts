import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { InboundRecord } from '../../src/kafka/kafka-client.ts';
import { type CommandReaderOptions, readCommand } from '../../src/pipeline/command.ts';
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

test('prepare may add fields; the command is then serialized again', () => {
  const command = readCommand(record(JSON.stringify(validOperations.sms)), {
    ...options,
    prepare: (operation) => {
      operation.hook = 'https://ferry.example.com/callbacks/t';
      return true;
    },
  });
  assert.equal(
    command.kind === 'valid' && JSON.parse(command.json).hook,
    'https://ferry.example.com/callbacks/t',
  );
});

test('ids beyond 2^53 are refused: they would collide once parsed', () => {
  const text = JSON.stringify(validOperations.sms).replace(/"id":\d+/, '"id":9007199254740993');
  const command = readCommand(record(text), options);
  assert.equal(command.kind, 'invalid');
  assert.match(
    command.kind === 'invalid' ? command.error : '',
    /^id: must be at most 9007199254740991/,
  );
  const safe = JSON.stringify({ ...validOperations.sms, id: Number.MAX_SAFE_INTEGER });
  assert.equal(readCommand(record(safe), options).kind, 'valid');
});
