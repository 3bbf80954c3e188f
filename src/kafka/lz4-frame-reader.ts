/**
 * Reading LZ4 frames (lz4.github.io/lz4, "LZ4 Frame Format Description") block by
 * block: the decompressed content is handed out a block at a time (at most 4 MiB, the
 * largest block size a frame may declare) and never held whole, so a frame that
 * expands a thousandfold costs one block of memory. Concatenated and skippable frames,
 * linked and independent blocks, and every checksum a frame may carry are checked.
 */
import { hash as xxh32 } from 'lz4js/xxh32.js';
import { decodeBlock, fail } from './lz4-block.ts';
import { Xxh32 } from './xxh32-stream.ts';

const FRAME_MAGIC = 0x184d2204;
/** Skippable frames: magic 0x184D2A50 to 0x184D2A5F, then a 4-byte length. */
const SKIPPABLE_MAGIC = 0x184d2a50;

// Frame descriptor, FLG byte.
const FLG_VERSION_MASK = 0xc0;
const FLG_VERSION = 0x40;
const FLG_BLOCK_INDEPENDENCE = 0x20;
const FLG_BLOCK_CHECKSUM = 0x10;
const FLG_CONTENT_SIZE = 0x08;
const FLG_CONTENT_CHECKSUM = 0x04;
const FLG_RESERVED = 0x02;
const FLG_DICT_ID = 0x01;
// BD byte: bits 4-6 give the block maximum size, the others are reserved.
const BD_RESERVED = 0x8f;
const BLOCK_MAX_SIZES = new Map([
  [4, 64 * 1024],
  [5, 256 * 1024],
  [6, 1024 * 1024],
  [7, 4 * 1024 * 1024],
]);
/** Set in a block's size field when the block is stored uncompressed. */
const UNCOMPRESSED_BIT = 0x80000000;
/** How far back a match of a linked block may reach into the blocks before it. */
const LINKED_WINDOW = 64 * 1024;

function readU32(src: Uint8Array, at: number): number {
  return (
    ((src[at] ?? 0) |
      ((src[at + 1] ?? 0) << 8) |
      ((src[at + 2] ?? 0) << 16) |
      ((src[at + 3] ?? 0) << 24)) >>>
    0
  );
}

/**
 * The decompressed content of one or more concatenated LZ4 frames, a block at a time.
 * Each chunk is valid until the next one is asked for (the buffer is reused).
 * @throws Lz4FrameError naming what is wrong with the buffer.
 */
export function* lz4FrameChunks(input: Uint8Array): Generator<Uint8Array, void, undefined> {
  if (input.length < 4) fail(`${input.length} bytes are not an LZ4 frame`);
  let pos = 0;
  while (pos < input.length) {
    if (input.length - pos < 4) fail('trailing bytes after the last frame');
    const magic = readU32(input, pos);
    if ((magic & 0xfffffff0) >>> 0 === SKIPPABLE_MAGIC) {
      if (input.length - pos < 8) fail('skippable frame truncated');
      pos += 8 + readU32(input, pos + 4);
      if (pos > input.length) fail('skippable frame truncated');
      continue;
    }
    if (magic !== FRAME_MAGIC) {
      fail(`not an LZ4 frame (magic 0x${magic.toString(16).padStart(8, '0')} at byte ${pos})`);
    }
    pos = yield* frameChunks(input, pos);
  }
}

/** Decodes every frame into one buffer (small inputs and tests; the reader streams). */
export function decodeLz4Frames(input: Uint8Array): Buffer {
  const parts: Buffer[] = [];
  for (const chunk of lz4FrameChunks(input)) parts.push(Buffer.from(chunk));
  return Buffer.concat(parts);
}

/** Yields the blocks of the frame whose magic is at `start`; returns where the next frame starts. */
function* frameChunks(input: Uint8Array, start: number): Generator<Uint8Array, number, undefined> {
  const descriptor = start + 4;
  if (input.length - descriptor < 3) fail('frame header truncated');
  const flg = input[descriptor] ?? 0;
  const bd = input[descriptor + 1] ?? 0;
  if ((flg & FLG_VERSION_MASK) !== FLG_VERSION) fail(`unsupported frame version ${flg >>> 6}`);
  if (flg & FLG_RESERVED || bd & BD_RESERVED) fail('reserved bits set in the frame descriptor');
  if (flg & FLG_DICT_ID) fail('frames with a preset dictionary are not supported');
  const maxBlock =
    BLOCK_MAX_SIZES.get((bd >>> 4) & 7) ?? fail(`invalid block size id ${(bd >>> 4) & 7}`);
  const descriptorLength = 2 + (flg & FLG_CONTENT_SIZE ? 8 : 0);
  if (input.length - descriptor < descriptorLength + 1) fail('frame header truncated');
  const checksum = input[descriptor + descriptorLength];
  const expected = (xxh32(0, input, descriptor, descriptorLength) >>> 8) & 0xff;
  // Kafka clients before 0.10 hashed the magic number too (message formats v0 and v1).
  const legacy = (xxh32(0, input, start, descriptorLength + 4) >>> 8) & 0xff;
  if (checksum !== expected && checksum !== legacy) fail('frame header checksum mismatch');
  let contentSize: bigint | undefined;
  if (flg & FLG_CONTENT_SIZE) {
    contentSize = Buffer.from(input.buffer, input.byteOffset, input.byteLength).readBigUInt64LE(
      descriptor + 2,
    );
  }

  const independent = (flg & FLG_BLOCK_INDEPENDENCE) !== 0;
  const blockChecksums = (flg & FLG_BLOCK_CHECKSUM) !== 0;
  const content = flg & FLG_CONTENT_CHECKSUM ? new Xxh32() : undefined;
  // Linked blocks decode after the last LINKED_WINDOW bytes of the blocks before them.
  const window = independent ? 0 : LINKED_WINDOW;
  const work = new Uint8Array(window + maxBlock);
  let history = 0;
  let produced = 0;
  let pos = descriptor + descriptorLength + 1;
  for (;;) {
    if (input.length - pos < 4) fail('frame truncated before its end mark');
    const field = readU32(input, pos);
    pos += 4;
    if (field === 0) break;
    const size = field & ~UNCOMPRESSED_BIT;
    if (size > maxBlock) fail(`block of ${size} bytes exceeds the frame's ${maxBlock}`);
    if (input.length - pos < size + (blockChecksums ? 4 : 0)) fail('block truncated');
    if (blockChecksums && xxh32(0, input, pos, size) !== readU32(input, pos + size)) {
      fail('block checksum mismatch');
    }
    let end: number;
    if (field & UNCOMPRESSED_BIT) {
      work.set(input.subarray(pos, pos + size), history);
      end = history + size;
    } else {
      end = decodeBlock(input, pos, pos + size, work, history, history + maxBlock, 0).end;
    }
    pos += size + (blockChecksums ? 4 : 0);
    const block = work.subarray(history, end);
    produced += block.length;
    content?.update(block);
    yield block;
    if (window > 0) {
      const keep = Math.min(window, end);
      work.copyWithin(0, end - keep, end);
      history = keep;
    }
  }
  if (content !== undefined) {
    if (input.length - pos < 4) fail('content checksum truncated');
    if (content.digest() !== readU32(input, pos)) fail('content checksum mismatch');
    pos += 4;
  }
  if (contentSize !== undefined && contentSize !== BigInt(produced)) {
    fail(`frame declares ${contentSize} bytes of content but holds ${produced}`);
  }
  return pos;
}
