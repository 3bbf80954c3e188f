/** A compressed records section that cannot be decompressed: its bytes are damaged. */
export class CodecError extends Error {
  override name = 'CodecError';
}
