/**
 * Decoding one partition's records of a fetch response with bounded memory.
 *
 * kafkajs decompresses a whole record batch into one buffer and makes a record of
 * every entry before ferry sees any: a batch of a few hundred kilobytes on the wire
 * can hold gigabytes once decompressed (a gzip value of 100 MB is 100 KB), and every
 * replica that reads it is killed for memory, restarts, and reads it again. Here a
 * compressed batch is decompressed as a stream and split into records as they come
 * out (record-splitter.ts):
 * - a record longer than the record limit never exists whole: it becomes a stand-in
 *   with its key, headers and offset and a null value, which ferry answers `too_large`;
 * - records before the fetch offset (a batch is always sent from its start) are passed
 *   over without being kept;
 * - the records kept for one fetch response share one budget of decompressed bytes.
 *   Once it is spent, the partition's records end there: kafkajs then fetches again
 *   from the first record not handed over, exactly as after a fetch cut short by its
 *   byte limit. The first record of a response is always kept, so reading never stops.
 * Uncompressed batches are bounded by their size on the wire and left to kafkajs.
 */
import { createRequire } from 'node:module';
import { CodecError } from './codec-error.ts';
import { decompressedChunks } from './decompressed-chunks.ts';
import {
  RecordSplitError,
  RecordSplitter,
  type SplitRecord,
  type SplitterLimits,
} from './record-splitter.ts';

const require = createRequire(import.meta.url);

/** kafkajs's protocol decoder (`src/protocol/decoder.js`), the parts used here. */
export interface KafkajsDecoder {
  offset: number;
  readonly buffer: Buffer;
  readInt8(): number;
  readInt16(): number;
  readInt32(): number;
  readInt64(): { toString(): string };
  readAll(): Buffer;
  readBytes(length: number): Buffer;
  canReadBytes(length: number): boolean;
  slice(size: number): KafkajsDecoder;
  forward(size: number): void;
}

type DecoderClass = new (buffer: Buffer) => KafkajsDecoder;
/** A record as kafkajs's record decoder makes it (fields as kafkajs names them). */
export type KafkajsRecord = Record<string, unknown>;

export const KafkajsDecoderClass = require('kafkajs/src/protocol/decoder') as DecoderClass;
const recordBatchDecoder = require('kafkajs/src/protocol/recordBatch/v0/decoder') as (
  decoder: KafkajsDecoder,
) => Promise<{ records: KafkajsRecord[] }>;
const recordDecoder = require('kafkajs/src/protocol/recordBatch/record/v0/decoder') as (
  decoder: KafkajsDecoder,
  context: Record<string, unknown>,
) => KafkajsRecord;
const messageSetDecoder = require('kafkajs/src/protocol/messageSet/decoder') as (
  decoder: KafkajsDecoder,
  size: number,
) => Promise<KafkajsRecord[]>;

/** Where the magic byte sits in every message format (after offset, length, and 4 more bytes). */
const MAGIC_OFFSET = 16;
const RECORD_BATCH_MAGIC = 2;
/** A record batch's header: anything shorter cannot be a batch. */
const RECORD_BATCH_OVERHEAD = 49;
/** Where a record batch's attributes sit: offset, length, leader epoch, magic, CRC. */
const ATTRIBUTES_OFFSET = 21;
const CODEC_MASK = 0x07;
const TRANSACTIONAL_FLAG = 0x10;
const CONTROL_FLAG = 0x20;
const LOG_APPEND_TIME_FLAG = 0x08;
/**
 * What a kept record costs beyond its bytes, charged to the budget: kafkajs's record
 * object and ferry's, near enough. It bounds how many records a response may hold, so
 * a batch of millions of empty records is read a slice at a time too.
 */
export const RECORD_OVERHEAD_BYTES = 512;

/** What bounded decoding did in this process, for diagnostics and tests. */
export interface BoundedDecodingCounts {
  /** Records handed over as stand-ins (too long to keep once decompressed). */
  standIns: number;
  /** Partitions whose records of a fetch answer ended at the budget, to be fetched again. */
  cuts: number;
}

export const boundedDecodingCounts: BoundedDecodingCounts = { standIns: 0, cuts: 0 };

/** The decompressed bytes one fetch response may keep, shared by its partitions. */
export class DecompressionBudget {
  readonly limitBytes: number;
  usedBytes = 0;
  kept = 0;
  /** Whether the records of some partition of the answer were cut short at the budget. */
  cut = false;

  constructor(limitBytes: number) {
    this.limitBytes = limitBytes;
  }

  /** Charges a record of `bytes` if the budget allows it; the first record always fits. */
  admit(bytes: number): boolean {
    const cost = bytes + RECORD_OVERHEAD_BYTES;
    if (this.kept > 0 && this.usedBytes + cost > this.limitBytes) return false;
    this.usedBytes += cost;
    this.kept += 1;
    return true;
  }

  /** Charges records kafkajs decoded itself (uncompressed, bounded by the wire). */
  charge(bytes: number, records: number): void {
    this.usedBytes += bytes + records * RECORD_OVERHEAD_BYTES;
    this.kept += records;
  }

  get spent(): boolean {
    return this.kept > 0 && this.usedBytes >= this.limitBytes;
  }
}

interface BatchOutcome {
  readonly records: KafkajsRecord[];
  /** The budget ran out inside this batch: nothing after its last record may be handed over. */
  readonly cut: boolean;
  /** The batch's last record before the fetch offset, when it had any. */
  readonly lastBefore?: KafkajsRecord | undefined;
}

async function decodeCompressedBatch(
  set: KafkajsDecoder,
  fetchOffset: bigint | undefined,
  budget: DecompressionBudget,
  limits: SplitterLimits,
): Promise<BatchOutcome> {
  const firstOffset = set.readInt64().toString();
  const length = set.readInt32();
  const batch = set.slice(length);
  set.forward(length);
  const partitionLeaderEpoch = batch.readInt32();
  const magicByte = batch.readInt8();
  batch.readInt32(); // CRC: kafkajs does not check it either; the codecs check their own.
  const attributes = batch.readInt16();
  const lastOffsetDelta = batch.readInt32();
  const firstTimestamp = batch.readInt64().toString();
  const maxTimestamp = batch.readInt64().toString();
  const producerId = batch.readInt64().toString();
  const producerEpoch = batch.readInt16();
  const firstSequence = batch.readInt32();
  const context = {
    firstOffset,
    firstTimestamp,
    partitionLeaderEpoch,
    inTransaction: (attributes & TRANSACTIONAL_FLAG) > 0,
    isControlBatch: (attributes & CONTROL_FLAG) > 0,
    lastOffsetDelta,
    producerId,
    producerEpoch,
    firstSequence,
    maxTimestamp,
    timestampType: (attributes & LOG_APPEND_TIME_FLAG) > 0 ? 1 : 0,
    magicByte,
  };
  const count = batch.readInt32();
  if (count <= 0) return { records: [], cut: false };
  // Records with a smaller offset delta are before the fetch offset: kafkajs would drop them.
  const firstWanted = Number(fetchOffset === undefined ? 0n : fetchOffset - BigInt(firstOffset));
  const splitter = new RecordSplitter(limits, count);
  const decoded = (piece: SplitRecord | undefined) =>
    piece && recordDecoder(new KafkajsDecoderClass(piece.body), context);
  const records: KafkajsRecord[] = [];
  let lastBefore: SplitRecord | undefined;
  try {
    for await (const chunk of decompressedChunks(attributes & CODEC_MASK, batch.readAll())) {
      for (const piece of splitter.push(chunk)) {
        if (piece.offsetDelta < firstWanted) {
          lastBefore = piece;
          continue;
        }
        if (!budget.admit(piece.body.length)) {
          return { records, cut: true, lastBefore: decoded(lastBefore) };
        }
        if (piece.oversizedBytes !== undefined) boundedDecodingCounts.standIns += 1;
        records.push(recordDecoder(new KafkajsDecoderClass(piece.body), context));
      }
      // Bytes after the last declared record are ignored, as kafkajs ignores them.
      if (splitter.done) break;
    }
  } catch (error: unknown) {
    if (error instanceof RecordSplitError) {
      throw new CodecError(`record batch at offset ${firstOffset}: ${error.message}`, {
        cause: error,
      });
    }
    throw error;
  }
  const seen = splitter.read;
  if (seen < count) {
    throw new CodecError(
      `record batch at offset ${firstOffset} holds ${seen} of the ${count} records it declares`,
    );
  }
  return { records, cut: false, lastBefore: decoded(lastBefore) };
}

/**
 * Decodes the record set of one partition of a fetch response (the `records` field),
 * as kafkajs's `decodeMessages` does, within `budget`.
 */
export async function decodePartitionRecords(
  decoder: KafkajsDecoder,
  fetchOffset: bigint | undefined,
  budget: DecompressionBudget,
  limits: SplitterLimits,
): Promise<KafkajsRecord[]> {
  const size = decoder.readInt32();
  if (size <= 0 || !decoder.canReadBytes(size)) return [];
  const buffer = decoder.readBytes(size);
  const set = new KafkajsDecoderClass(buffer);
  if (buffer.length <= MAGIC_OFFSET || buffer.readInt8(MAGIC_OFFSET) !== RECORD_BATCH_MAGIC) {
    // Message formats v0 and v1 (brokers before 0.11): kafkajs's own decoder.
    return messageSetDecoder(set, size);
  }
  const records: KafkajsRecord[] = [];
  // The last record before the fetch offset, handed over only when nothing after it is,
  // and only when every batch of the answer was read: kafkajs steps over a fetch offset
  // that compaction removed (its batch still ends past it) only when it sees a record
  // below it, so the partition would stop there otherwise; but it steps over the fetch
  // offset itself, so a record there that was not read must not be stepped over.
  let lastBefore: KafkajsRecord | undefined;
  let readToTheEnd = true;
  while (set.canReadBytes(RECORD_BATCH_OVERHEAD)) {
    const start = set.offset;
    const length = buffer.readInt32BE(start + 8);
    // The tail of a fetch may end inside a batch (its byte limit): the rest comes next time.
    if (buffer.length - start - 12 < length) {
      readToTheEnd = false;
      break;
    }
    if ((buffer.readInt16BE(start + ATTRIBUTES_OFFSET) & CODEC_MASK) === 0) {
      const batch = await recordBatchDecoder(set);
      for (const record of batch.records) records.push(record);
      budget.charge(12 + length, batch.records.length);
      continue;
    }
    if (budget.spent) {
      readToTheEnd = false;
      break;
    }
    const outcome = await decodeCompressedBatch(set, fetchOffset, budget, limits);
    for (const record of outcome.records) records.push(record);
    lastBefore = outcome.lastBefore ?? lastBefore;
    if (outcome.cut) {
      budget.cut = true;
      boundedDecodingCounts.cuts += 1;
      readToTheEnd = false;
      break;
    }
  }
  if (readToTheEnd && records.length === 0 && lastBefore !== undefined) records.push(lastBefore);
  return records;
}
