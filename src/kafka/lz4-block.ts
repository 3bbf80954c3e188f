/**
 * Decoding one raw LZ4 block (the block format of lz4.github.io/lz4), shared by the
 * frame reader and by the writer's check of what lz4js compressed.
 */

const MIN_MATCH = 4;

export class Lz4FrameError extends Error {
  override name = 'Lz4FrameError';
}

export function fail(message: string): never {
  throw new Lz4FrameError(`lz4: ${message}`);
}

export interface DecodedBlock {
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
export function decodeBlock(
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
