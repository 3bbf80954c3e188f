import assert from 'node:assert/strict';
import { test } from 'node:test';
import { type OutboundRecord, produceChunks } from '../../src/kafka/kafka-client.ts';

const record = (bytes: number): OutboundRecord => ({
  topic: 't',
  key: 'k',
  value: 'x'.repeat(bytes),
});

test('records are split so no produce request exceeds half a MiB, in order', () => {
  const records = Array.from({ length: 5_000 }, () => record(300));
  const chunks = produceChunks(records);
  assert.ok(chunks.length > 1);
  assert.deepEqual(chunks.flat(), records, 'nothing lost or reordered');
  for (const chunk of chunks) {
    const bytes = chunk.reduce((sum, r) => sum + String(r.value).length, 0);
    assert.ok(bytes <= 512 * 1024, `${bytes} bytes`);
  }
});

test('a record larger than the limit travels alone; few small records stay together', () => {
  assert.equal(produceChunks([record(10), record(600 * 1024), record(10)]).length, 3);
  assert.equal(produceChunks([record(10), record(10)]).length, 1);
  assert.deepEqual(produceChunks([]), []);
});

test('a smaller limit gives smaller requests', () => {
  const chunks = produceChunks(
    Array.from({ length: 10 }, () => record(100_000)),
    250_000,
  );
  assert.equal(chunks.length, 5);
  for (const chunk of chunks) assert.equal(chunk.length, 2);
});
