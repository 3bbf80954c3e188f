/**
 * The LZ4 frame format (lz4.github.io/lz4, "LZ4 Frame Format Description"), which
 * Kafka's record batches carry since message format v1: the Java client and librdkafka
 * both write it and read it.
 *
 * lz4js supplies the block compressor and xxHash32; the frame around the blocks is
 * written and read here because lz4js's own frame functions do not fit Kafka:
 * - its frames leave the block-independence flag unset, and the broker refuses them
 *   ("Dependent block stream is unsupported") when it validates a produced batch;
 * - its reader skips every checksum unchecked, misreads the 64-bit content size, stops
 *   after the first of concatenated frames and has no bounds checks, so a damaged
 *   buffer would decode to garbage instead of an error.
 */
import { compressBlock, compressBound } from 'lz4js';
import { hash as xxh32 } from 'lz4js/xxh32.js';

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
const MIN_MATCH = 4;
/** The last match of a block starts at least this many bytes before its end. */
const MF_LIMIT = 12;
/** The last bytes of a block are always literals. */
const LAST_LITERALS = 5;

/**
 * What ferry writes: 64 KiB independent blocks, no checksums, no content size, the
 * same descriptor as librdkafka's frames (FLG 0x60, BD 0x40), which the Java client
 * and the broker accept. The batch's own CRC-32C already covers the compressed bytes.
 */
const WRITE_BLOCK_ID = 4;
const WRITE_BLOCK_SIZE = 64 * 1024;

export class Lz4FrameError extends Error {
  override name = 'Lz4FrameError';
}

function fail(message: string): never {
  throw new Lz4FrameError(`lz4: ${message}`);
}

/** Output that grows as blocks are appended; matches of linked blocks read back into it. */
class Output {
  bytes: Uint8Array;
  length = 0;
  constructor(capacity: number) {
    this.bytes = new Uint8Array(Math.max(capacity, 1024));
  }
  reserve(extra: number): void {
    const needed = this.length + extra;
    if (needed <= this.bytes.length) return;
    const grown = new Uint8Array(Math.max(needed, this.bytes.length * 2));
    grown.set(this.bytes.subarray(0, this.length));
    this.bytes = grown;
  }
  append(chunk: Uint8Array): void {
    this.reserve(chunk.length);
    this.bytes.set(chunk, this.length);
    this.length += chunk.length;
  }
}

interface DecodedBlock {
  /** Where the output ends after the block. */
  readonly end: number;
  /** Output position of the block's last match, -1 when it has none. */
  readonly lastMatchAt: number;
}

function readLength(src: Uint8Array, at: number, end: number): [number, number] {
  let length = 0;
  let index = at;
  let byte: number;
  do {
    if (index >= end) fail('block truncated inside a length');
    byte = src[index++] ?? 0;
    length += byte;
  } while (byte === 255);
  return [length, index];
}

/**
 * Decodes one raw LZ4 block, `src[start, end)`, into `dst` from `at`, writing no further
 * than `limit`. A match may reach back to `windowStart` (the block's own start for
 * independent blocks, the frame's for linked ones). Every bound is checked.
 */
function decodeBlock(
  src: Uint8Array,
  start: number,
  end: number,
  dst: Uint8Array,
  at: number,
  limit: number,
  windowStart: number,
): DecodedBlock {
  let s = start;
  let d = at;
  let lastMatchAt = -1;
  for (;;) {
    if (s >= end) fail('block truncated');
    const token = src[s++] ?? 0;
    let literals = token >>> 4;
    if (literals === 15) [literals, s] = addLength(literals, src, s, end);
    if (literals > end - s) fail('literals run past the end of the block');
    if (literals > limit - d) fail('block decodes to more than its maximum size');
    dst.set(src.subarray(s, s + literals), d);
    s += literals;
    d += literals;
    // The last sequence of a block has literals only.
    if (s === end) return { end: d, lastMatchAt };
    if (end - s < 2) fail('block truncated inside a match offset');
    const offset = (src[s] ?? 0) | ((src[s + 1] ?? 0) << 8);
    s += 2;
    if (offset === 0 || offset > d - windowStart) fail(`match offset ${offset} out of range`);
    let length = token & 15;
    if (length === 15) [length, s] = addLength(length, src, s, end);
    length += MIN_MATCH;
    if (length > limit - d) fail('block decodes to more than its maximum size');
    lastMatchAt = d;
    if (offset >= length) {
      dst.copyWithin(d, d - offset, d - offset + length);
      d += length;
    } else {
      // Overlapping match: repeats the last `offset` bytes, one byte at a time.
      for (let i = 0; i < length; i++, d++) dst[d] = dst[d - offset] ?? 0;
    }
  }
}

function addLength(base: number, src: Uint8Array, at: number, end: number): [number, number] {
  const [extra, next] = readLength(src, at, end);
  return [base + extra, next];
}

/**
 * Checks a block from lz4js against `original`: 'sound' when it decodes back to it and
 * keeps the end-of-block rules, 'broken' when it does not decode back, or the output
 * position of a last match that starts too close to the end. lz4js may start the last
 * match 10 or 11 bytes before the end of a block, which the reference decoder refuses
 * when the block fills its whole buffer.
 */
function checkBlock(compressed: Uint8Array, original: Uint8Array): 'sound' | 'broken' | number {
  const check = new Uint8Array(original.length);
  try {
    const { end, lastMatchAt } = decodeBlock(
      compressed,
      0,
      compressed.length,
      check,
      0,
      check.length,
      0,
    );
    if (end !== original.length || !Buffer.from(check).equals(original)) return 'broken';
    return lastMatchAt < 0 || lastMatchAt + MF_LIMIT <= original.length ? 'sound' : lastMatchAt;
  } catch {
    return 'broken';
  }
}

/** Tries to shorten a block whose last match breaks the end rule this many times. */
const MAX_BLOCK_CUTS = 4;

/**
 * Compresses a block of at most `length` bytes of `data` from `start` into `scratch`.
 * Returns the bytes of input it took and the compressed size, 0 to store them as is.
 * A block whose last match starts too close to its end is cut before that match and
 * compressed again: blocks may be shorter than the frame's maximum.
 */
function compressSoundBlock(
  data: Uint8Array,
  start: number,
  length: number,
  scratch: Uint8Array,
  table: Uint32Array,
): [taken: number, size: number] {
  let taken = length;
  for (let attempt = 0; attempt <= MAX_BLOCK_CUTS && taken > LAST_LITERALS; attempt++) {
    const block = data.subarray(start, start + taken);
    // A fresh table per block: no match reaches into the previous block (independence).
    table.fill(0);
    const size = compressBlock(block, scratch, 0, block.length, table);
    if (size === 0 || size >= block.length) break;
    const verdict = checkBlock(scratch.subarray(0, size), block);
    if (verdict === 'sound') return [taken, size];
    if (verdict === 'broken') break;
    taken = verdict;
  }
  return [length, 0];
}

function u32le(value: number): Buffer {
  const out = Buffer.alloc(4);
  out.writeUInt32LE(value >>> 0);
  return out;
}

/** One LZ4 frame of `data`, as described at WRITE_BLOCK_SIZE. */
export function encodeLz4Frame(data: Uint8Array): Buffer {
  const header = Buffer.from([0x04, 0x22, 0x4d, 0x18, FLG_VERSION | FLG_BLOCK_INDEPENDENCE, 0, 0]);
  header[5] = WRITE_BLOCK_ID << 4;
  header[6] = (xxh32(0, header, 4, 2) >>> 8) & 0xff;
  const parts: Buffer[] = [header];
  const scratch = new Uint8Array(compressBound(WRITE_BLOCK_SIZE));
  const table = new Uint32Array(1 << 16);
  let start = 0;
  while (start < data.length) {
    const length = Math.min(WRITE_BLOCK_SIZE, data.length - start);
    const [taken, size] = compressSoundBlock(data, start, length, scratch, table);
    if (size > 0) {
      parts.push(u32le(size), Buffer.from(scratch.subarray(0, size)));
    } else {
      parts.push(u32le(taken | UNCOMPRESSED_BIT), Buffer.from(data.subarray(start, start + taken)));
    }
    start += taken;
  }
  parts.push(u32le(0));
  return Buffer.concat(parts);
}

/**
 * Decodes one or more concatenated LZ4 frames (skippable frames are skipped), with
 * linked or independent blocks, checking the header checksum and, when present, the
 * block checksums, the content checksum and the content size.
 * @throws Lz4FrameError naming what is wrong with the buffer.
 */
export function decodeLz4Frames(input: Uint8Array): Buffer {
  if (input.length < 4) fail(`${input.length} bytes are not an LZ4 frame`);
  const out = new Output(input.length * 4);
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
    pos = decodeFrame(input, pos, out);
  }
  return Buffer.from(out.bytes.buffer, out.bytes.byteOffset, out.length);
}

function readU32(src: Uint8Array, at: number): number {
  return (
    ((src[at] ?? 0) |
      ((src[at + 1] ?? 0) << 8) |
      ((src[at + 2] ?? 0) << 16) |
      ((src[at + 3] ?? 0) << 24)) >>>
    0
  );
}

/** Decodes the frame whose magic is at `start` into `out`; returns where the next frame starts. */
function decodeFrame(input: Uint8Array, start: number, out: Output): number {
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
  const frameStart = out.length;
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
    if (field & UNCOMPRESSED_BIT) {
      out.append(input.subarray(pos, pos + size));
    } else {
      out.reserve(maxBlock);
      const blockStart = out.length;
      out.length = decodeBlock(
        input,
        pos,
        pos + size,
        out.bytes,
        blockStart,
        blockStart + maxBlock,
        independent ? blockStart : frameStart,
      ).end;
    }
    pos += size + (blockChecksums ? 4 : 0);
  }
  const produced = out.length - frameStart;
  if (flg & FLG_CONTENT_CHECKSUM) {
    if (input.length - pos < 4) fail('content checksum truncated');
    if (xxh32(0, out.bytes, frameStart, produced) !== readU32(input, pos)) {
      fail('content checksum mismatch');
    }
    pos += 4;
  }
  if (contentSize !== undefined && contentSize !== BigInt(produced)) {
    fail(`frame declares ${contentSize} bytes of content but holds ${produced}`);
  }
  return pos;
}
