/**
 * ferry's bounded decoding of a partition's record set against kafkajs's own decoding,
 * on record batches that kafkajs's encoder writes in every codec: the same records
 * where kafkajs would keep them, stand-ins for records over the limit, nothing before
 * the fetch offset, and cuts at the budget that lose and repeat nothing.
 */
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { test } from 'node:test';
import {
  DecompressionBudget,
  decodePartitionRecords,
  KafkajsDecoderClass,
  type KafkajsRecord,
  RECORD_OVERHEAD_BYTES,
} from '../../src/kafka/bounded-batches.ts';
import { KEPT_PART_MAX_BYTES } from '../../src/kafka/bounded-fetch.ts';
import { registerCompressionCodecs } from '../../src/kafka/compression.ts';
import type { SplitterLimits } from '../../src/kafka/record-splitter.ts';

const require = createRequire(import.meta.url);
type Encoder = { buffer: Buffer };
const { RecordBatch } = require('kafkajs/src/protocol/recordBatch/v0') as {
  RecordBatch: (options: Record<string, unknown>) => Promise<Encoder>;
};
const Record = require('kafkajs/src/protocol/recordBatch/record/v0') as (
  options: Record<string, unknown>,
) => Encoder;
const kafkajsBatchDecoder = require('kafkajs/src/protocol/recordBatch/v0/decoder') as (
  decoder: unknown,
) => Promise<{ records: KafkajsRecord[] }>;

registerCompressionCodecs();

const CODECS = { none: 0, gzip: 1, snappy: 2, lz4: 3, zstd: 4 } as const;
const RECORD_MAX = 4096;
const MARKER = 'ferry-oversized';
const PREFIX = 'test-nonce:';
const limits: SplitterLimits = {
  wholeRecordMaxBytes: RECORD_MAX + KEPT_PART_MAX_BYTES,
  keptPartMaxBytes: KEPT_PART_MAX_BYTES,
  marker: MARKER,
  markerPrefix: PREFIX,
};

interface Plain {
  readonly key: Buffer | null;
  readonly value: Buffer | null;
  readonly headers: Record<string, Buffer>;
}

/** A deterministic mix: small JSON, empty and null values, headers, a few values over the limit. */
function plainRecords(count: number, seed: number): Plain[] {
  return Array.from({ length: count }, (_, i) => {
    const n = (seed * 31 + i * 7) % 13;
    const value =
      n === 0
        ? null
        : n === 1
          ? Buffer.alloc(0)
          : n === 2
            ? Buffer.alloc(RECORD_MAX * 50 + i, 'x')
            : Buffer.from(JSON.stringify({ id: i, text: 'y'.repeat(n * 37) }));
    return {
      key: n === 3 ? null : Buffer.from(`key-${seed}-${i}`),
      value,
      headers: n % 2 === 0 ? { trace: Buffer.from(`t${i}`), empty: Buffer.alloc(0) } : {},
    };
  });
}

/** One partition's record set (int32 size, then the batches) as a fetch answer carries it. */
async function recordSet(
  codec: number,
  batches: readonly Plain[][],
  firstOffset = 100,
): Promise<Buffer> {
  const parts: Buffer[] = [];
  let offset = firstOffset;
  for (const plain of batches) {
    const records = plain.map((r, i) =>
      Record({ offsetDelta: i, timestampDelta: i, key: r.key, value: r.value, headers: r.headers }),
    );
    const batch = await RecordBatch({
      compression: codec,
      firstOffset: BigInt(offset),
      firstTimestamp: 1_700_000_000_000,
      lastOffsetDelta: plain.length - 1,
      records,
    });
    parts.push(batch.buffer);
    offset += plain.length;
  }
  const body = Buffer.concat(parts);
  const size = Buffer.alloc(4);
  size.writeInt32BE(body.length);
  return Buffer.concat([size, body]);
}

async function ferryDecode(set: Buffer, fetchOffset: bigint | undefined, budgetBytes: number) {
  const budget = new DecompressionBudget(budgetBytes);
  const records = await decodePartitionRecords(
    new KafkajsDecoderClass(set),
    fetchOffset,
    budget,
    limits,
  );
  return { records, budget };
}

async function kafkajsDecode(set: Buffer): Promise<KafkajsRecord[]> {
  const decoder = new KafkajsDecoderClass(set.subarray(4));
  const records: KafkajsRecord[] = [];
  while (decoder.canReadBytes(49)) {
    for (const record of (await kafkajsBatchDecoder(decoder)).records) records.push(record);
  }
  return records;
}

/** Compares ferry's record with kafkajs's: equal, or a stand-in of it when over the limit. */
function assertSame(ours: KafkajsRecord, theirs: KafkajsRecord | undefined, what: string): void {
  const value = theirs?.value as Buffer | null;
  if (value === null || value.length <= limits.wholeRecordMaxBytes) {
    assert.deepEqual(ours, theirs, what);
    return;
  }
  const { [MARKER]: marker, ...headers } = ours.headers as Record<string, Buffer>;
  const text = marker?.toString() ?? '';
  assert.ok(text.startsWith(PREFIX), `${what}: a stand-in`);
  const [recordBytes, valueBytes] = text.slice(PREFIX.length).split(':').map(Number);
  assert.equal(valueBytes, value.length, `${what}: the value's length`);
  assert.ok(Number(recordBytes) > value.length, `${what}: the record's length`);
  assert.equal(ours.value, null, `${what}: no value`);
  assert.deepEqual({ ...ours, headers, value }, theirs, `${what}: all else as kafkajs`);
}

for (const [name, codec] of Object.entries(CODECS)) {
  test(`${name}: records as kafkajs decodes them, stand-ins for those over the limit`, async () => {
    const batches = [plainRecords(40, 1), plainRecords(3, 2), plainRecords(25, 3)];
    const set = await recordSet(codec, batches);
    const theirs = await kafkajsDecode(set);
    const { records, budget } = await ferryDecode(set, undefined, 1024 * 1024 * 1024);
    assert.equal(records.length, theirs.length);
    assert.equal(budget.cut, false);
    if (codec === 0) {
      // Uncompressed batches are bounded by the wire and decoded by kafkajs itself.
      assert.deepEqual(records, theirs);
      return;
    }
    for (const [i, record] of records.entries()) assertSame(record, theirs[i], `record ${i}`);
  });
}

for (const codec of [1, 2, 3, 4]) {
  test(`codec ${codec}: nothing before the fetch offset, from inside a batch`, async () => {
    const batches = [plainRecords(30, 4), plainRecords(30, 5)];
    const set = await recordSet(codec, batches);
    const theirs = await kafkajsDecode(set);
    for (const fetchOffset of [100n, 101n, 117n, 129n, 130n, 145n, 159n, 160n]) {
      const { records } = await ferryDecode(set, fetchOffset, 1024 * 1024 * 1024);
      const wanted = (r: KafkajsRecord) => BigInt(String(r.offset)) >= fetchOffset;
      assert.deepEqual(
        records.filter(wanted).map((r) => r.offset),
        theirs.filter(wanted).map((r) => r.offset),
        `from ${fetchOffset}`,
      );
      // Below the fetch offset: nothing, or the last record before it when nothing is after
      // it (so kafkajs steps over an offset that compaction removed, as it does itself).
      const before = records.filter((r) => !wanted(r)).map((r) => String(r.offset));
      const expected = records.some(wanted) ? [] : [String(fetchOffset - 1n)];
      assert.deepEqual(before, expected, `below ${fetchOffset}`);
    }
  });

  test(`codec ${codec}: a budget cuts the records and fetching again from the cut reads each once`, async () => {
    const batches = [plainRecords(30, 6), plainRecords(30, 7), plainRecords(30, 8)];
    const set = await recordSet(codec, batches);
    const theirs = (await kafkajsDecode(set)).map((r) => String(r.offset));
    // A budget of about five small records: many fetches, each from where the last ended.
    const budget = 5 * (RECORD_OVERHEAD_BYTES + 300);
    const read: string[] = [];
    let next = 100n;
    for (let fetches = 0; fetches < 200 && next < 190n; fetches++) {
      const { records } = await ferryDecode(set, next, budget);
      assert.ok(records.length > 0, `a fetch from ${next} keeps at least one record`);
      for (const record of records) read.push(String(record.offset));
      next = BigInt(String(records.at(-1)?.offset)) + 1n;
    }
    assert.deepEqual(read, theirs, 'every record once, in order');
  });
}

test('a spent budget leaves the later partitions of the answer for the next fetch', async () => {
  const set = await recordSet(4, [plainRecords(20, 9)]);
  const budget = new DecompressionBudget(2 * RECORD_OVERHEAD_BYTES);
  const first = await decodePartitionRecords(new KafkajsDecoderClass(set), 100n, budget, limits);
  assert.ok(first.length >= 1 && first.length < 20, `${first.length} kept`);
  const second = await decodePartitionRecords(new KafkajsDecoderClass(set), 100n, budget, limits);
  assert.deepEqual(second, [], 'nothing of a partition once the answer is spent');
});

test("kafkajs's own decoding holds a whole decompressed value, ferry's none of it", async () => {
  const value = Buffer.alloc(20 * 1024 * 1024, 'a');
  const set = await recordSet(1, [[{ key: Buffer.from('k'), value, headers: {} }]]);
  assert.ok(set.length < 100_000, `${set.length} bytes on the wire`);
  const [theirs] = await kafkajsDecode(set);
  assert.equal((theirs?.value as Buffer | undefined)?.length, value.length, 'kafkajs: 20 MiB held');
  const { records } = await ferryDecode(set, undefined, 8 * 1024 * 1024);
  assert.equal(records[0]?.value, null, 'ferry: a stand-in');
  assert.ok((records[0]?.headers as Record<string, Buffer> | undefined)?.[MARKER], 'marked');
});

test('a fetch offset that compaction removed is stepped over as kafkajs steps over it', async () => {
  // A batch of offsets 100-109 whose last five records the log cleaner removed: the batch
  // still says it ends at 109, and kafkajs fetches from 105.
  const kept = plainRecords(5, 10).map((r, i) =>
    Record({ offsetDelta: i, timestampDelta: i, key: r.key, value: Buffer.from('{}') }),
  );
  const batch = await RecordBatch({
    compression: 1,
    firstOffset: 100n,
    firstTimestamp: 1_700_000_000_000,
    lastOffsetDelta: 9,
    records: kept,
  });
  const size = Buffer.alloc(4);
  size.writeInt32BE(batch.buffer.length);
  const set = Buffer.concat([size, batch.buffer]);
  const Batch = require('kafkajs/src/consumer/batch') as new (
    topic: string,
    fetchedOffset: string,
    data: Record<string, unknown>,
  ) => { isEmptyDueToLogCompactedMessages(): boolean; lastOffset(): string };
  const partition = (messages: KafkajsRecord[]) =>
    new Batch('t', '105', {
      partition: 0,
      highWatermark: '120',
      messages,
      abortedTransactions: [],
    });
  const ours = partition((await ferryDecode(set, 105n, 1024 * 1024)).records);
  const theirs = partition(await kafkajsDecode(set));
  assert.equal(theirs.isEmptyDueToLogCompactedMessages(), true);
  assert.equal(ours.isEmptyDueToLogCompactedMessages(), true, 'kafkajs steps over it');
  assert.equal(ours.lastOffset(), theirs.lastOffset());
});

test('a producer header named like the stand-in marker does not hide a stand-in', async () => {
  const { inbound } = await import('../../src/kafka/records.ts');
  const { splitterLimits } = await import('../../src/kafka/bounded-fetch.ts');
  const real = splitterLimits({ recordMaxBytes: RECORD_MAX, decompressedMaxBytes: 1 << 30 });
  const set = await recordSet(1, [
    [
      {
        key: Buffer.from('k'),
        value: Buffer.alloc(RECORD_MAX * 100, 'x'),
        headers: { [real.marker]: Buffer.from('the producer said so') },
      },
    ],
  ]);
  const budget = new DecompressionBudget(1 << 30);
  const [record] = await decodePartitionRecords(new KafkajsDecoderClass(set), 100n, budget, real);
  const mapped = inbound('t', 0, record as never);
  assert.equal(mapped.oversized?.valueBytes, RECORD_MAX * 100);
  assert.equal(mapped.value, null);
});

test('a record before the fetch offset is never handed over alone when the answer was cut short', async () => {
  // Fetching from 125: the first batch (100-119) lies wholly before it, the second holds it.
  const set = await recordSet(4, [plainRecords(20, 11), plainRecords(20, 12)]);
  const Batch = require('kafkajs/src/consumer/batch') as new (
    topic: string,
    fetchedOffset: string,
    data: Record<string, unknown>,
  ) => { isEmptyDueToLogCompactedMessages(): boolean };
  // An answer whose budget an earlier partition nearly spent: the first batch is read
  // (nothing of it is kept), the second is cut before its first record.
  const spent = new DecompressionBudget(1000);
  spent.admit(10);
  const records = await decodePartitionRecords(new KafkajsDecoderClass(set), 125n, spent, limits);
  assert.deepEqual(records, [], 'nothing: kafkajs fetches from 125 again');
  const batch = new Batch('t', '125', {
    partition: 0,
    highWatermark: '140',
    messages: records,
    abortedTransactions: [],
  });
  assert.equal(
    batch.isEmptyDueToLogCompactedMessages(),
    false,
    'so offset 125 is not stepped over',
  );
  // Read whole, the record at 125 comes.
  const whole = await ferryDecode(set, 125n, 1024 * 1024 * 1024);
  assert.equal(whole.records.find((r) => BigInt(String(r.offset)) >= 125n)?.offset, '125');
});
