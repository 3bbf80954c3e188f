/**
 * The parts of the `lz4js` package (no type declarations of its own) that ferry uses:
 * the block compressor and the xxHash32 of the LZ4 frame format.
 */
declare module 'lz4js' {
  /** Upper bound of the compressed size of `length` input bytes. */
  export function compressBound(length: number): number;
  /**
   * Compresses `src[sIndex, sIndex + sLength)` as one raw LZ4 block into `dst` (at 0),
   * finding matches through `hashTable` (65 536 entries, zeroed for an independent block).
   * Returns the compressed size, or 0 when it found nothing to compress.
   */
  export function compressBlock(
    src: Uint8Array,
    dst: Uint8Array,
    sIndex: number,
    sLength: number,
    hashTable: Uint32Array,
  ): number;
}

declare module 'lz4js/xxh32.js' {
  /** xxHash32 of `src[index, index + length)` with `seed`, as an unsigned 32-bit number. */
  export function hash(seed: number, src: Uint8Array, index: number, length: number): number;
}
