/** The `snappyjs` package (no type declarations of its own): raw Snappy blocks. */
declare module 'snappyjs' {
  /** Compresses `data` to one raw Snappy block (no framing); a Buffer gives a Buffer. */
  export function compress(data: Buffer): Buffer;
  /**
   * Decompresses one raw Snappy block.
   * @throws Error when the bitstream is invalid or claims more than `maxLength` bytes.
   */
  export function uncompress(data: Buffer, maxLength?: number): Buffer;
}
