/** The record splitter: the same records however the decompressed bytes are chunked. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  RecordSplitError,
  RecordSplitter,
  type SplitRecord,
  zigzagVarint,
} from '../../src/kafka/record-splitter.ts';

const limits = {
  wholeRecordMaxBytes: 200,
  keptPartMaxBytes: 64,
  marker: 'ferry-oversized',
  markerPrefix: 'n:',
};

function bytes(length: number, fill: string): Buffer {
  return Buffer.alloc(length, fill);
}

/** One record (length prefix included) with `key`, `value` and `headers`. */
function record(
  offsetDelta: number,
  key: Buffer | null,
  value: Buffer | null,
  headers: [string, Buffer][] = [],
): Buffer {
  const field = (b: Buffer | null) =>
    b === null ? zigzagVarint(-1) : Buffer.concat([zigzagVarint(b.length), b]);
  const body = Buffer.concat([
    Buffer.from([0]),
    zigzagVarint(offsetDelta * 10),
    zigzagVarint(offsetDelta),
    field(key),
    field(value),
    zigzagVarint(headers.length),
    ...headers.map(([k, v]) => Buffer.concat([field(Buffer.from(k)), field(v)])),
  ]);
  return Buffer.concat([zigzagVarint(body.length), body]);
}

const section = Buffer.concat([
  record(0, Buffer.from('a'), Buffer.from('{"id":1}'), [['h', Buffer.from('1')]]),
  record(1, null, null),
  record(2, Buffer.from('big'), bytes(5000, 'x'), [['trace', Buffer.from('t')]]),
  record(3, bytes(100, 'k'), bytes(5000, 'y'), [['h', bytes(100, 'z')]]),
  record(4, Buffer.from(''), Buffer.from('')),
]);

function split(chunkSize: number): SplitRecord[] {
  const splitter = new RecordSplitter(limits);
  const out: SplitRecord[] = [];
  for (let at = 0; at < section.length; at += chunkSize) {
    out.push(...splitter.push(section.subarray(at, at + chunkSize)));
  }
  return out;
}

test('the same records whether the bytes come at once or one at a time', () => {
  const whole = split(section.length);
  assert.equal(whole.length, 5);
  for (const size of [1, 2, 3, 7, 64, 333])
    assert.deepEqual(split(size), whole, `chunks of ${size}`);
  assert.deepEqual(
    whole.map((r) => r.offsetDelta),
    [0, 1, 2, 3, 4],
  );
});

test('records within the limit come out as they are', () => {
  const [first, second, , , last] = split(section.length);
  assert.equal(first?.oversizedBytes, undefined);
  assert.ok(section.includes(first?.body ?? Buffer.alloc(1)));
  assert.equal(second?.body.length, 6, 'a null key and value');
  assert.equal(last?.oversizedBytes, undefined);
});

test('a longer record becomes a stand-in: key and headers kept within their bound, value null, marker last', () => {
  const [, , big, huge] = split(50);
  assert.ok(big?.oversizedBytes && big.oversizedBytes > 5000);
  assert.equal(big?.oversizedValueBytes, 5000);
  const text = big?.body.toString('latin1') ?? '';
  assert.ok(text.includes('big'), 'the key is kept');
  assert.ok(text.includes('trace'), 'the headers are kept');
  assert.ok(text.endsWith(`n:${big?.oversizedBytes}:5000`), text);
  assert.ok(text.includes('ferry-oversized'), 'the marker header');
  assert.ok(!text.includes('xxxx'), 'no byte of the value');
  // Key and header over 64 bytes: both left out, only the marker remains.
  const hugeText = huge?.body.toString('latin1') ?? '';
  assert.ok(!hugeText.includes('kkkk') && !hugeText.includes('zzzz'), hugeText);
  assert.ok(hugeText.includes('ferry-oversized'));
});

test('bytes that are not records are a RecordSplitError', () => {
  const splitter = new RecordSplitter(limits);
  assert.throws(() => splitter.push(zigzagVarint(-5)), RecordSplitError);
  const varint = new RecordSplitter(limits);
  assert.throws(() => varint.push(Buffer.alloc(12, 0xff)), RecordSplitError);
});

test('bytes after the records a batch declares are not read', () => {
  const splitter = new RecordSplitter(limits, 2);
  const records = splitter.push(Buffer.concat([section, Buffer.from([0xff, 0xff, 0x01])]));
  assert.equal(records.length, 2);
  assert.equal(splitter.done, true);
});
