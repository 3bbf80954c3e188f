import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { InboundRecord } from '../../src/kafka/kafka-client.ts';
import {
  batchBytes,
  fetchSizes,
  InFlightBudget,
  recordBytes,
} from '../../src/pipeline/in-flight-budget.ts';

const MIB = 1024 * 1024;

test('reaching the command cap pauses once; resume waits until half', () => {
  const budget = new InFlightBudget({ maxCommands: 10, maxBytes: MIB });
  assert.equal(budget.change(9, 100), undefined);
  assert.equal(budget.change(1, 100), 'pause');
  assert.equal(budget.exhausted, true);
  assert.equal(budget.change(5, 100), undefined, 'already paused: no second pause');
  assert.equal(budget.change(-9, -100), undefined, '6 commands left, above half of 10');
  assert.equal(budget.change(-1, -100), 'resume', '5 commands: half the cap');
  assert.equal(budget.exhausted, false);
  assert.equal(budget.change(-5, -100), undefined, 'already running: no second resume');
  assert.deepEqual([budget.commands, budget.bytes], [0, 0]);
});

test('reaching the byte cap pauses even far below the command cap', () => {
  const budget = new InFlightBudget({ maxCommands: 1000, maxBytes: 1000 });
  assert.equal(budget.change(1, 999), undefined);
  assert.equal(budget.change(1, 1), 'pause');
  assert.equal(budget.change(-1, -499), undefined, '501 bytes: above half');
  assert.equal(budget.change(0, -1), 'resume', '500 bytes: half');
});

test('a single batch larger than the byte cap pauses, and resumes once it is done', () => {
  const budget = new InFlightBudget({ maxCommands: 1000, maxBytes: 1000 });
  assert.equal(budget.change(3, 5000), 'pause');
  assert.equal(budget.change(-3, -5000), 'resume');
});

test('resume needs both amounts at half their cap', () => {
  const budget = new InFlightBudget({ maxCommands: 10, maxBytes: 1000 });
  assert.equal(budget.change(10, 1000), 'pause');
  assert.equal(budget.change(-8, 0), undefined, 'commands low, bytes still at the cap');
  assert.equal(budget.change(0, -600), 'resume');
});

test('without a byte cap only commands count', () => {
  const budget = new InFlightBudget({ maxCommands: 2, maxBytes: Number.POSITIVE_INFINITY });
  assert.equal(budget.change(1, 10 * MIB * 1024), undefined);
  assert.equal(budget.change(1, 0), 'pause');
  assert.equal(budget.change(-1, -10 * MIB * 1024), 'resume');
});

const record = (value: string | null, key: string | null, headers: Record<string, string>) =>
  ({
    topic: 't',
    partition: 0,
    offset: '0',
    key: key === null ? null : Buffer.from(key),
    value: value === null ? null : Buffer.from(value),
    headers,
    timestamp: '0',
  }) satisfies InboundRecord;

test('a record counts its value, key and headers in UTF-8 bytes', () => {
  assert.equal(recordBytes(record('{"a":1}', 'k1', { traceparent: 'é' })), 7 + 2 + 11 + 2);
  assert.equal(recordBytes(record(null, null, {})), 0);
  assert.equal(batchBytes([record('abc', null, {}), record('de', 'f', {})]), 6);
});

test('fetch sizes derive from the cap unless set, never below 64 KiB', () => {
  assert.deepEqual(fetchSizes(32 * MIB, {}), { maxBytes: 4 * MIB, maxBytesPerPartition: MIB });
  assert.deepEqual(fetchSizes(16 * MIB, {}), { maxBytes: 2 * MIB, maxBytesPerPartition: MIB / 2 });
  assert.deepEqual(fetchSizes(256 * 1024, {}), {
    maxBytes: 64 * 1024,
    maxBytesPerPartition: 64 * 1024,
  });
  assert.deepEqual(fetchSizes(32 * MIB, { maxBytes: MIB }), {
    maxBytes: MIB,
    maxBytesPerPartition: MIB / 4,
  });
  assert.deepEqual(fetchSizes(32 * MIB, { maxBytesPerPartition: 4096 }), {
    maxBytes: 4 * MIB,
    maxBytesPerPartition: 4096,
  });
});
