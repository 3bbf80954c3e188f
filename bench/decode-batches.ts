/**
 * Decoding compressed record batches: kafkajs's own decoder (one buffer per batch)
 * against ferry's bounded decoding (streamed, split as it comes), records per second,
 * one batch of 1,000 bench commands per codec, median of 7 rounds of 200 batches.
 * Run alone: `node bench/decode-batches.ts`.
 */
import { createRequire } from 'node:module';
import {
  DecompressionBudget,
  decodePartitionRecords,
  type KafkajsDecoder,
  KafkajsDecoderClass,
} from '../src/kafka/bounded-batches.ts';
import { KEPT_PART_MAX_BYTES } from '../src/kafka/bounded-fetch.ts';
import { registerCompressionCodecs } from '../src/kafka/compression.ts';
import { benchCommands } from './command-mix.ts';
import { median } from './stats.ts';

const require = createRequire(import.meta.url);
type Encoder = { buffer: Buffer };
const { RecordBatch } = require('kafkajs/src/protocol/recordBatch/v0') as {
  RecordBatch: (options: Record<string, unknown>) => Promise<Encoder>;
};
const Record = require('kafkajs/src/protocol/recordBatch/record/v0') as (
  options: Record<string, unknown>,
) => Encoder;
const kafkajsBatch = require('kafkajs/src/protocol/recordBatch/v0/decoder') as (
  decoder: KafkajsDecoder,
) => Promise<{ records: unknown[] }>;

const CODECS = { gzip: 1, snappy: 2, lz4: 3, zstd: 4 } as const;
const RECORDS = 1000;
const BATCHES_PER_ROUND = 200;
const limits = {
  wholeRecordMaxBytes: 1024 * 1024 + KEPT_PART_MAX_BYTES,
  keptPartMaxBytes: KEPT_PART_MAX_BYTES,
  marker: 'ferry-oversized',
  markerPrefix: 'bench:',
};

async function recordSet(codec: number): Promise<Buffer> {
  const records = benchCommands(1, RECORDS).map((command, i) =>
    Record({ offsetDelta: i, key: Buffer.from(command.key), value: Buffer.from(command.value) }),
  );
  const batch = await RecordBatch({
    compression: codec,
    firstOffset: 0n,
    lastOffsetDelta: RECORDS - 1,
    records,
  });
  const size = Buffer.alloc(4);
  size.writeInt32BE(batch.buffer.length);
  return Buffer.concat([size, batch.buffer]);
}

async function rate(decode: () => Promise<number>): Promise<number> {
  const rounds: number[] = [];
  for (let round = 0; round < 8; round++) {
    const start = performance.now();
    let records = 0;
    for (let i = 0; i < BATCHES_PER_ROUND; i++) records += await decode();
    // The first round warms up.
    if (round > 0) rounds.push((records / (performance.now() - start)) * 1000);
  }
  return median(rounds);
}

registerCompressionCodecs();
console.log('codec    kafkajs rec/s    ferry rec/s   ratio');
for (const [name, codec] of Object.entries(CODECS)) {
  const set = await recordSet(codec);
  const theirs = await rate(
    async () => (await kafkajsBatch(new KafkajsDecoderClass(set.subarray(4)))).records.length,
  );
  const ours = await rate(
    async () =>
      (
        await decodePartitionRecords(
          new KafkajsDecoderClass(set),
          0n,
          new DecompressionBudget(64 * 1024 * 1024),
          limits,
        )
      ).length,
  );
  console.log(
    `${name.padEnd(8)} ${theirs.toFixed(0).padStart(13)} ${ours.toFixed(0).padStart(14)}   ${(ours / theirs).toFixed(2)}`,
  );
}
