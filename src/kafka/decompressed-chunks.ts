/**
 * The decompressed records section of a record batch as a stream of chunks, for every
 * codec Kafka has, so that a reader can look at the records as they come out and stop
 * early instead of holding the whole section. Chunks are at most a few hundred KiB
 * (zlib's chunk size, one LZ4 block of at most 4 MiB, Snappy's hand-out size).
 */

import type { Transform } from 'node:stream';
import { constants, createGunzip, createZstdDecompress } from 'node:zlib';
import { CodecError } from './codec-error.ts';
import { lz4FrameChunks } from './lz4-frame-reader.ts';
import { snappyChunks } from './snappy-stream.ts';

/** zlib's output per chunk: records are small next to it, chunks few. */
const ZLIB_CHUNK_BYTES = 64 * 1024;
/**
 * The largest zstd window a frame may ask the decoder to keep, as a power of two: 32 MiB.
 * Kafka clients compress at levels that use 8 MiB at most; a frame asking for more
 * (up to 2 GiB) would hold memory outside every bound, so it is refused as damaged.
 */
const ZSTD_WINDOW_LOG_MAX = 25;

async function* zlibChunks(
  stream: Transform,
  input: Buffer,
  name: string,
): AsyncGenerator<Uint8Array> {
  stream.end(input);
  try {
    for await (const chunk of stream) yield chunk as Buffer;
  } catch (error: unknown) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new CodecError(`${name}: ${reason}`, { cause: error });
  } finally {
    // Stopped early (or failed): what was not decompressed yet never is.
    stream.destroy();
  }
}

async function* syncChunks(chunks: Iterable<Uint8Array>, name: string): AsyncGenerator<Uint8Array> {
  try {
    yield* chunks;
  } catch (error: unknown) {
    if (error instanceof CodecError) throw error;
    const reason = error instanceof Error ? error.message : String(error);
    throw new CodecError(reason.startsWith(name) ? reason : `${name}: ${reason}`, { cause: error });
  }
}

/**
 * The decompressed bytes of `input`, compressed with `codec` (1 gzip, 2 snappy, 3 lz4,
 * 4 zstd). A chunk is valid until the next one is asked for.
 * @throws CodecError for an unknown codec or damaged bytes.
 */
export function decompressedChunks(codec: number, input: Buffer): AsyncGenerator<Uint8Array> {
  switch (codec) {
    case 1:
      return zlibChunks(createGunzip({ chunkSize: ZLIB_CHUNK_BYTES }), input, 'gzip');
    case 2:
      return syncChunks(snappyChunks(input), 'snappy');
    case 3:
      return syncChunks(lz4FrameChunks(input), 'lz4');
    case 4:
      return zlibChunks(
        createZstdDecompress({
          chunkSize: ZLIB_CHUNK_BYTES,
          params: { [constants.ZSTD_d_windowLogMax]: ZSTD_WINDOW_LOG_MAX },
        }),
        input,
        'zstd',
      );
    default:
      throw new CodecError(`unknown compression codec ${codec}`);
  }
}
