/**
 * Snappy, LZ4 and zstd for kafkajs, which ships gzip only and otherwise fails a whole
 * fetch with "Snappy compression not implemented" (or LZ4, ZSTD): a producer using
 * any of them (franz-go defaults to snappy) would stop every ferry replica on the same
 * batch. kafkajs looks codecs up in its exported `CompressionCodecs` table on every
 * batch, so filling that table once, before the first fetch, is enough.
 */
import { promisify } from 'node:util';
import { zstdCompress, zstdDecompress } from 'node:zlib';
import { compress as snappyCompress } from 'snappyjs';
// kafkajs is CommonJS and Node cannot see these two among its named exports.
import { CodecError } from './codec-error.ts';
import kafkajs, { type CompressionTypes } from './kafkajs.ts';
import { encodeLz4Frame } from './lz4-frame.ts';
import { decodeLz4Frames } from './lz4-frame-reader.ts';
import { snappyChunks } from './snappy-stream.ts';

/** What ferry may write its own records with (FERRY_KAFKA_COMPRESSION). */
export type KafkaCompression = 'none' | 'gzip' | 'snappy' | 'lz4' | 'zstd';

/** Compresses and decompresses the records section of a record batch. */
export interface Codec {
  compress(data: Buffer): Promise<Buffer>;
  decompress(data: Buffer): Promise<Buffer>;
}

export { CodecError };

const zstdCompressAsync = promisify(zstdCompress);
const zstdDecompressAsync = promisify(zstdDecompress);

/** ferry's Snappy writes use snappy-java's default block: uncompressed bytes per framed chunk. */
const XERIAL_BLOCK_SIZE = 32 * 1024;
const XERIAL_MAGIC = Buffer.from([0x82, 0x53, 0x4e, 0x41, 0x50, 0x50, 0x59, 0x00]);
const XERIAL_HEADER_LENGTH = XERIAL_MAGIC.length + 8;

/** Every piece of a streamed decompression in one buffer (the pieces' buffers are reused). */
function joined(chunks: Iterable<Uint8Array>): Buffer {
  const parts: Buffer[] = [];
  for (const chunk of chunks) parts.push(Buffer.from(chunk));
  return Buffer.concat(parts);
}

/**
 * Snappy as Kafka clients write it. The Java client frames raw Snappy blocks in the
 * xerial stream format; librdkafka (kcat, confluent-kafka) and franz-go write one raw
 * block and read both. Decoding (snappy-stream.ts) detects the xerial magic; encoding
 * writes the xerial framing, which the Java client requires and librdkafka reads.
 */
export const snappy: Codec = {
  async compress(data) {
    const header = Buffer.alloc(XERIAL_HEADER_LENGTH);
    XERIAL_MAGIC.copy(header);
    header.writeInt32BE(1, 8);
    header.writeInt32BE(1, 12);
    const parts: Buffer[] = [header];
    for (let start = 0; start < data.length; start += XERIAL_BLOCK_SIZE) {
      const block = snappyCompress(data.subarray(start, start + XERIAL_BLOCK_SIZE));
      const length = Buffer.alloc(4);
      length.writeInt32BE(block.length);
      parts.push(length, block);
    }
    return Buffer.concat(parts);
  },
  async decompress(data) {
    return joined(snappyChunks(data));
  },
};

/** LZ4 frames, as Kafka's record batches carry them (see lz4-frame.ts). */
export const lz4: Codec = {
  async compress(data) {
    return encodeLz4Frame(data);
  },
  async decompress(data) {
    try {
      return decodeLz4Frames(data);
    } catch (error: unknown) {
      if (error instanceof Error) throw new CodecError(error.message, { cause: error });
      throw error;
    }
  },
};

/** zstd frames through Node's zlib (no dependency), off the main thread like gzip. */
export const zstd: Codec = {
  async compress(data) {
    return zstdCompressAsync(data);
  },
  async decompress(data) {
    try {
      return await zstdDecompressAsync(data);
    } catch (error: unknown) {
      const reason = error instanceof Error ? error.message : String(error);
      throw new CodecError(`zstd: ${reason}`, { cause: error });
    }
  },
};

/** The shape kafkajs calls: `compress` gets its Encoder (the bytes are in `buffer`). */
interface KafkajsCodec {
  compress(encoder: { readonly buffer: Buffer }): Promise<Buffer>;
  decompress(buffer: Buffer): Promise<Buffer>;
}

function forKafkajs(codec: Codec): () => KafkajsCodec {
  const adapted: KafkajsCodec = {
    compress: (encoder) => codec.compress(encoder.buffer),
    decompress: (buffer) => codec.decompress(buffer),
  };
  return () => adapted;
}

let registered = false;

/**
 * Registers Snappy, LZ4 and zstd with kafkajs for this process, for reading and
 * writing. Idempotent: every KafkaClient calls it, only the first call does anything.
 */
export function registerCompressionCodecs(): void {
  if (registered) return;
  const { CompressionCodecs, CompressionTypes } = kafkajs;
  CompressionCodecs[CompressionTypes.Snappy] = forKafkajs(snappy);
  CompressionCodecs[CompressionTypes.LZ4] = forKafkajs(lz4);
  CompressionCodecs[CompressionTypes.ZSTD] = forKafkajs(zstd);
  registered = true;
}

const kafkajsTypes: Readonly<Record<KafkaCompression, CompressionTypes>> = {
  none: kafkajs.CompressionTypes.None,
  gzip: kafkajs.CompressionTypes.GZIP,
  snappy: kafkajs.CompressionTypes.Snappy,
  lz4: kafkajs.CompressionTypes.LZ4,
  zstd: kafkajs.CompressionTypes.ZSTD,
};

/** The kafkajs compression type of a ferry codec name, for `sendBatch`. */
export function compressionType(name: KafkaCompression): CompressionTypes {
  return kafkajsTypes[name];
}
