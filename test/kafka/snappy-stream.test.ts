/** Streaming Snappy: large raw blocks decode piece by piece; damage is a CodecError. */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { test } from 'node:test';
import { compress } from 'snappyjs';
import { CodecError } from '../../src/kafka/codec-error.ts';
import { FLUSH_BYTES, snappyChunks } from '../../src/kafka/snappy-stream.ts';

function joined(input: Uint8Array): { out: Buffer; pieces: number; largest: number } {
  const parts: Buffer[] = [];
  let largest = 0;
  for (const chunk of snappyChunks(input)) {
    parts.push(Buffer.from(chunk));
    largest = Math.max(largest, chunk.length);
  }
  return { out: Buffer.concat(parts), pieces: parts.length, largest };
}

test('a raw block of several MiB (as librdkafka and franz-go write) decodes in bounded pieces', () => {
  const text = Buffer.from(
    Array.from({ length: 60_000 }, (_, i) => `{"id":${i},"text":"message ${i % 97}"}`).join(''),
  );
  const input = Buffer.concat([text, randomBytes(500_000), Buffer.alloc(2_000_000, 7)]);
  const { out, pieces, largest } = joined(compress(input));
  assert.ok(out.equals(input), `${out.length} of ${input.length} bytes back`);
  assert.ok(pieces > 10, `${pieces} pieces`);
  assert.ok(largest <= FLUSH_BYTES, `pieces of at most ${largest} bytes`);
});

test('a block that declares more or less than it holds, or copies from before its start, is refused', () => {
  const good = Buffer.from(compress(Buffer.from('hello hello hello hello')));
  const longer = Buffer.concat([Buffer.from([good[0] ?? 0 + 1]), good.subarray(1)]);
  longer[0] = (good[0] ?? 0) + 1;
  assert.throws(() => joined(longer), CodecError);
  // A copy (tag 2: 2-byte offset) reaching 100 bytes back at the very start.
  const reachBack = Buffer.from([10, 0b00000110, 100, 0]);
  assert.throws(() => joined(reachBack), /copy reaches back/);
  assert.throws(() => joined(good.subarray(0, good.length - 2)), CodecError);
});
