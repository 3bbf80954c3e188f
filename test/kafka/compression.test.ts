import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { type Codec, CodecError, lz4, snappy, zstd } from '../../src/kafka/compression.ts';
import { findTool, runOk } from '../deploy/external-tools.ts';

const codecs: Record<string, Codec> = { snappy, lz4, zstd };

/** What a batch of results looks like: many small JSON records, 400 KB in all. */
const results = Buffer.from(
  Array.from({ length: 5000 }, (_, i) =>
    JSON.stringify({ id: i, success: true, stage: 'upstream', msg_id: 90_000 + i, parts: 1 }),
  ).join(''),
);

const inputs: Record<string, Buffer> = {
  empty: Buffer.alloc(0),
  'one byte': Buffer.from('x'),
  'JSON results, several blocks': results,
  'random bytes (incompressible)': randomBytes(200_000),
  'one repeated byte': Buffer.alloc(300_000, 7),
};

// Two records ({"id":1,…} and {"id":2,…}) as record-batch payloads written by others:
// the Kafka broker (Java, snappy-java) recompressing for a topic with
// compression.type=snappy or lz4, and kcat 1.7.1 (librdkafka 2.0.2) with -z snappy.
const JAVA_XERIAL_SNAPPY =
  '82534e41505059000000000100000001000000305664540000000261467b226964223a312c2274657874223a2268692036030020227d005400000202620d2b0032722b00';
const LIBRDKAFKA_RAW_SNAPPY =
  '5664540000000261467b226964223a312c2274657874223a2268692036030020227d005400000202620d2b0032722b00';
const JAVA_LZ4_FRAME =
  '04224d1860408235000000fa0b540000000261467b226964223a312c2274657874223a22686920030093227d005400000202622b001f322b0005506869227d0000000000';
/** The records section both make: two records keyed `a` and `b`, their JSON values. */
const TWO_RECORDS = Buffer.from(
  'T\0\0\0\x02aF{"id":1,"text":"hi hi hi hi hi hi"}\0T\0\0\x02\x02bF{"id":2,"text":"hi hi hi hi hi hi"}\0',
  'latin1',
);

for (const [name, codec] of Object.entries(codecs)) {
  test(`${name}: every input survives a round trip`, async () => {
    for (const [what, input] of Object.entries(inputs)) {
      const compressed = await codec.compress(input);
      assert.ok(Buffer.isBuffer(compressed), `${what}: compress gives a Buffer`);
      const back = await codec.decompress(compressed);
      assert.ok(back.equals(input), `${what}: ${input.length} bytes back as ${back.length}`);
    }
    const compressed = await codec.compress(results);
    assert.ok(compressed.length < results.length / 3, `JSON compresses (${compressed.length} B)`);
  });

  test(`${name}: a damaged buffer is a CodecError, not a crash or garbage`, async () => {
    const good = await codec.compress(results);
    const damaged = [
      Buffer.from('not compressed at all'),
      Buffer.alloc(0),
      good.subarray(0, good.length >> 1),
      Buffer.concat([good.subarray(0, 20), randomBytes(200)]),
    ];
    for (const bad of damaged) {
      await assert.rejects(codec.decompress(bad), (error: unknown) => {
        assert.ok(error instanceof CodecError, String(error));
        assert.match(error.message, new RegExp(`^${name}: `));
        return true;
      });
    }
  });
}

test('snappy: the xerial framing of the Java client and the raw block of librdkafka both decode', async () => {
  assert.ok((await snappy.decompress(Buffer.from(JAVA_XERIAL_SNAPPY, 'hex'))).equals(TWO_RECORDS));
  assert.ok(
    (await snappy.decompress(Buffer.from(LIBRDKAFKA_RAW_SNAPPY, 'hex'))).equals(TWO_RECORDS),
  );
});

test('snappy: ferry writes the xerial framing, in 32 KiB blocks', async () => {
  const compressed = await snappy.compress(results);
  assert.equal(compressed.subarray(0, 8).toString('latin1'), '\x82SNAPPY\0');
  assert.deepEqual([compressed.readInt32BE(8), compressed.readInt32BE(12)], [1, 1]);
  let blocks = 0;
  for (let pos = 16; pos < compressed.length; pos += 4 + compressed.readInt32BE(pos)) blocks++;
  assert.equal(blocks, Math.ceil(results.length / (32 * 1024)));
});

test('snappy: a raw block claiming an absurd length is refused before allocating', async () => {
  // Varint 0xffffffff0f (4 GiB) followed by a few bytes.
  const bomb = Buffer.from([0xff, 0xff, 0xff, 0xff, 0x0f, 0x00, 0x01, 0x02]);
  await assert.rejects(snappy.decompress(bomb), /^CodecError: snappy: /);
});

test('lz4: a frame written by the Kafka broker (Java) decodes', async () => {
  assert.ok((await lz4.decompress(Buffer.from(JAVA_LZ4_FRAME, 'hex'))).equals(TWO_RECORDS));
});

test('lz4: ferry writes independent 64 KiB blocks with the descriptor librdkafka and Java write', async () => {
  const frame = await lz4.compress(results);
  assert.equal(frame.readUInt32LE(0), 0x184d2204);
  assert.deepEqual([frame[4], frame[5], frame[6]], [0x60, 0x40, 0x82]);
});

test('lz4: frames of the reference lz4 CLI decode, with and without checksums, linked blocks and content size', async () => {
  const lz4Cli = findTool('lz4');
  const dir = mkdtempSync(join(tmpdir(), 'ferry-lz4-'));
  try {
    const plain = join(dir, 'plain');
    writeFileSync(plain, Buffer.concat([results, randomBytes(70_000), results]));
    const variants: Record<string, string[]> = {
      'defaults (content checksum, 4 MiB blocks)': [],
      'block checksums, linked 64 KiB blocks, content size': [
        '-BX',
        '-BD',
        '-B4',
        '--content-size',
      ],
      'no content checksum, 256 KiB blocks': ['--no-frame-crc', '-B5'],
      'fast level, independent blocks': ['-1', '-BI', '-B4'],
    };
    for (const [what, flags] of Object.entries(variants)) {
      const out = join(dir, 'frame.lz4');
      runOk(lz4Cli, ['-q', '-f', ...flags, plain, out]);
      const frame = readFileSync(out);
      assert.ok((await lz4.decompress(frame)).equals(readFileSync(plain)), what);
      if (what.startsWith('block checksums')) {
        // Flip a byte inside the first block: its checksum must catch it.
        const damaged = Buffer.from(frame);
        damaged[40] = (damaged[40] ?? 0) ^ 0xff;
        await assert.rejects(lz4.decompress(damaged), /block checksum mismatch/);
      }
      if (what.startsWith('defaults')) {
        const damaged = Buffer.from(frame);
        damaged[damaged.length - 1] = (damaged[damaged.length - 1] ?? 0) ^ 0xff;
        await assert.rejects(lz4.decompress(damaged), /content checksum mismatch/);
      }
    }
    // Two frames back to back decode to both contents.
    const a = join(dir, 'a.lz4');
    runOk(lz4Cli, ['-q', '-f', plain, a]);
    const twice = Buffer.concat([readFileSync(a), readFileSync(a)]);
    assert.ok(
      (await lz4.decompress(twice)).equals(
        Buffer.concat([readFileSync(plain), readFileSync(plain)]),
      ),
    );
    // And the reference CLI reads what ferry writes.
    const ours = join(dir, 'ours.lz4');
    writeFileSync(ours, await lz4.compress(results));
    runOk(lz4Cli, ['-q', '-d', '-f', ours, join(dir, 'back')]);
    assert.ok(readFileSync(join(dir, 'back')).equals(results));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
