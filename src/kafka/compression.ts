/**
 * Snappy, LZ4 and zstd for kafkajs, which ships gzip only and otherwise fails a whole
 * fetch with "Snappy compression not implemented" (or LZ4, ZSTD): a producer using
 * any of them (franz-go defaults to snappy) would stop every ferry replica on the same
 * batch. kafkajs looks codecs up in its exported `CompressionCodecs` table on every
 * batch, so filling that table once, before the first fetch, is enough.
 */
import { promisify } from 'node:util';
import { zstdCompress, zstdDecompress } from 'node:zlib';
import { compress as snappyCompress, uncompress as snappyUncompress } from 'snappyjs';
// kafkajs is CommonJS and Node cannot see these two among its named exports.
import kafkajs, { type CompressionTypes } from './kafkajs.ts';
import { decodeLz4Frames, encodeLz4Frame } from './lz4-frame.ts';

/** What ferry may write its own records with (FERRY_KAFKA_COMPRESSION). */
export type KafkaCompression = 'none' | 'gzip' | 'snappy' | 'lz4' | 'zstd';

/** Compresses and decompresses the records section of a record batch. */
export interface Codec {
  compress(data: Buffer): Promise<Buffer>;
  decompress(data: Buffer): Promise<Buffer>;
}

export class CodecError extends Error {
  override name = 'CodecError';
}

const zstdCompressAsync = promisify(zstdCompress);
const zstdDecompressAsync = promisify(zstdDecompress);

/** The Snappy framing of the Java client (xerial snappy-java's SnappyOutputStream). */
const XERIAL_MAGIC = Buffer.from([0x82, 0x53, 0x4e, 0x41, 0x50, 0x50, 0x59, 0x00]);
/** Magic, then the stream version and the oldest compatible version, big-endian int32s. */
const XERIAL_HEADER_LENGTH = XERIAL_MAGIC.length + 8;
/** snappy-java's default block: uncompressed bytes per framed chunk. */
const XERIAL_BLOCK_SIZE = 32 * 1024;
/**
 * No Snappy element expands more than 64 bytes from 3 (a copy with a 2-byte offset),
 * so a raw block that claims more than this many times its size is damaged: checked
 * before the output is allocated, so garbage cannot ask for gigabytes.
 */
const SNAPPY_MAX_RATIO = 22;

function unsnappy(block: Buffer): Buffer {
  try {
    return snappyUncompress(block, block.length * SNAPPY_MAX_RATIO + 64);
  } catch (error: unknown) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new CodecError(`snappy: ${reason}`, { cause: error });
  }
}

/**
 * Snappy as Kafka clients write it. The Java client frames raw Snappy blocks in the
 * xerial stream format; librdkafka (kcat, confluent-kafka) and franz-go write one raw
 * block and read both. Decoding detects the xerial magic; encoding writes the xerial
 * framing, which the Java client requires and librdkafka reads.
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
    if (data.length < XERIAL_MAGIC.length || !data.subarray(0, 8).equals(XERIAL_MAGIC)) {
      return unsnappy(data);
    }
    if (data.length < XERIAL_HEADER_LENGTH) throw new CodecError('snappy: xerial header truncated');
    const parts: Buffer[] = [];
    let pos = XERIAL_HEADER_LENGTH;
    while (pos < data.length) {
      if (data.length - pos < 4) throw new CodecError('snappy: xerial block length truncated');
      const length = data.readInt32BE(pos);
      pos += 4;
      if (length < 0 || length > data.length - pos) {
        throw new CodecError(`snappy: xerial block of ${length} bytes runs past the buffer`);
      }
      parts.push(unsnappy(data.subarray(pos, pos + length)));
      pos += length;
    }
    return Buffer.concat(parts);
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
