/**
 * Writing the LZ4 frame format (lz4.github.io/lz4, "LZ4 Frame Format Description"),
 * which Kafka's record batches carry since message format v1: the Java client and
 * librdkafka both write it and read it. Reading is lz4-frame-reader.ts.
 *
 * lz4js supplies the block compressor and xxHash32; the frame around the blocks is
 * written and read by ferry because lz4js's own frame functions do not fit Kafka:
 * - its frames leave the block-independence flag unset, and the broker refuses them
 *   ("Dependent block stream is unsupported") when it validates a produced batch;
 * - its reader skips every checksum unchecked, misreads the 64-bit content size, stops
 *   after the first of concatenated frames and has no bounds checks, so a damaged
 *   buffer would decode to garbage instead of an error.
 */
import { compressBlock, compressBound } from 'lz4js';
import { hash as xxh32 } from 'lz4js/xxh32.js';
import { decodeBlock } from './lz4-block.ts';

// Frame descriptor, FLG byte.
const FLG_VERSION = 0x40;
const FLG_BLOCK_INDEPENDENCE = 0x20;
/** Set in a block's size field when the block is stored uncompressed. */
const UNCOMPRESSED_BIT = 0x80000000;
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
