/**
 * Puts ferry's bounded decoding of record batches (bounded-batches.ts) under kafkajs's
 * Fetch requests: Fetch v11, the version kafkajs uses with every broker since Kafka
 * 2.3, is decoded by ferry; older brokers keep kafkajs's own decoding (unbounded).
 *
 * kafkajs builds each request through the `protocol` function of its Fetch request
 * module and decodes the answer with the `decode` of the object that function returns,
 * both looked up at call time: replacing `protocol` (once, for the whole process) lets
 * the decoding of each answer know the offsets its request asked for. Limits are kept
 * per topic, set by whoever reads it (`setTopicReadLimits`), because a replacement in
 * kafkajs's module cache is shared by every client in the process.
 */

import { randomBytes } from 'node:crypto';
import { createRequire } from 'node:module';
import {
  DecompressionBudget,
  decodePartitionRecords,
  type KafkajsDecoder,
  KafkajsDecoderClass,
} from './bounded-batches.ts';
import type { Oversized } from './kafka-port.ts';
import type { SplitterLimits } from './record-splitter.ts';

const require = createRequire(import.meta.url);

/** What ferry keeps of a topic's records when it reads them. */
export interface TopicReadLimits {
  /** A record whose value is longer than this is handed over as a stand-in (`oversized`). */
  readonly recordMaxBytes: number;
  /** Decompressed bytes one fetch response may keep for the topic's partitions. */
  readonly decompressedMaxBytes: number;
}

/**
 * For topics no one set limits for (ferry's own topics read back: dead letters, the
 * control topic; tools): records come whole, as kafkajs would hand them over, and one
 * answer keeps 8 MiB of them.
 */
export const DEFAULT_READ_LIMITS: TopicReadLimits = {
  recordMaxBytes: Number.POSITIVE_INFINITY,
  decompressedMaxBytes: 8 * 1024 * 1024,
};

/** A stand-in's key and headers are kept up to this size each; records this much over the value limit still come whole. */
export const KEPT_PART_MAX_BYTES = 64 * 1024;

/** The header of a stand-in: random per process, so no producer can write one. */
const MARKER_HEADER = 'ferry-oversized';
const MARKER_PREFIX = `${randomBytes(12).toString('hex')}:`;

const limitsByTopic = new Map<string, TopicReadLimits>();

/** Sets how `topic`'s records are kept when read in this process (the last call wins). */
export function setTopicReadLimits(topic: string, limits: TopicReadLimits): void {
  limitsByTopic.set(topic, limits);
}

/** How records of a topic with `limits` are split: whole up to the limit and 64 KiB, stand-ins above. */
export function splitterLimits(limits: TopicReadLimits): SplitterLimits {
  return {
    wholeRecordMaxBytes: limits.recordMaxBytes + KEPT_PART_MAX_BYTES,
    keptPartMaxBytes: KEPT_PART_MAX_BYTES,
    marker: MARKER_HEADER,
    markerPrefix: MARKER_PREFIX,
  };
}

/** What a stand-in says of the record it replaces. */
export type { Oversized } from './kafka-port.ts';

/**
 * The sizes of the record a stand-in replaces, read from its headers (kafkajs's shape:
 * name → Buffer); undefined for every record that came whole.
 */
export function oversizedOf(
  headers: Readonly<Record<string, unknown>> | undefined,
): Oversized | undefined {
  // A producer's own header of that name comes first: kafkajs then makes an array, and
  // the stand-in's marker is its last element.
  const value = headers?.[MARKER_HEADER];
  const marker = Array.isArray(value) ? value.at(-1) : value;
  if (!Buffer.isBuffer(marker)) return undefined;
  const text = marker.toString('latin1');
  if (!text.startsWith(MARKER_PREFIX)) return undefined;
  const [recordBytes, valueBytes] = text.slice(MARKER_PREFIX.length).split(':').map(Number);
  if (!Number.isSafeInteger(recordBytes) || !Number.isSafeInteger(valueBytes)) return undefined;
  return { recordBytes: recordBytes ?? 0, valueBytes: valueBytes ?? -1 };
}

/** The header name of stand-ins, for the record mapping to leave it out. */
export const OVERSIZED_MARKER_HEADER = MARKER_HEADER;

interface FetchTopicRequest {
  readonly topic: string;
  readonly partitions: readonly { readonly partition: number; readonly fetchOffset: string }[];
}

type FetchResponseModule = { decode(raw: Buffer): Promise<unknown>; parse(data: unknown): unknown };
type FetchProtocol = (args: { topics: readonly FetchTopicRequest[] }) => {
  response: FetchResponseModule;
};
interface FetchRequestModule {
  protocol(options: { version: number }): FetchProtocol;
}

const BOUNDED_VERSION = 11;

function fetchOffsets(topics: readonly FetchTopicRequest[]): Map<string, bigint> {
  const offsets = new Map<string, bigint>();
  for (const { topic, partitions } of topics) {
    for (const { partition, fetchOffset } of partitions) {
      offsets.set(`${topic}\u0000${partition}`, BigInt(fetchOffset));
    }
  }
  return offsets;
}

/** Fetch Response v11, as kafkajs decodes it, with each partition's records bounded. */
async function decodeV11(raw: Buffer, offsets: Map<string, bigint>): Promise<unknown> {
  const decoder = new KafkajsDecoderClass(raw) as KafkajsDecoder & {
    readString(): string;
    readArray<T>(read: (d: KafkajsDecoder) => T): T[];
    readArrayAsync<T>(read: (d: KafkajsDecoder) => Promise<T>): Promise<T[]>;
  };
  const clientSideThrottleTime = decoder.readInt32();
  const errorCode = decoder.readInt16();
  const sessionId = decoder.readInt32();
  const budgets = new Map<string, DecompressionBudget>();
  const responses = await decoder.readArrayAsync(async (topicDecoder) => {
    const d = topicDecoder as typeof decoder;
    const topicName = d.readString();
    const limits = limitsByTopic.get(topicName) ?? DEFAULT_READ_LIMITS;
    let budget = budgets.get(topicName);
    if (budget === undefined) {
      budget = new DecompressionBudget(limits.decompressedMaxBytes);
      budgets.set(topicName, budget);
    }
    const topicBudget = budget;
    const partitions = await d.readArrayAsync(async (p) => {
      const pd = p as typeof decoder;
      const partition = pd.readInt32();
      return {
        partition,
        errorCode: pd.readInt16(),
        highWatermark: pd.readInt64().toString(),
        lastStableOffset: pd.readInt64().toString(),
        lastStartOffset: pd.readInt64().toString(),
        abortedTransactions: pd.readArray((a) => ({
          producerId: a.readInt64().toString(),
          firstOffset: a.readInt64().toString(),
        })),
        preferredReadReplica: pd.readInt32(),
        messages: await decodePartitionRecords(
          pd,
          offsets.get(`${topicName}\u0000${partition}`),
          topicBudget,
          splitterLimits(limits),
        ),
      };
    });
    return { topicName, partitions };
  });
  // kafkajs reports no throttle of its own for this version; the broker's is client-side.
  return { throttleTime: 0, clientSideThrottleTime, errorCode, sessionId, responses };
}

let installed = false;

/**
 * Makes kafkajs decode Fetch v11 answers with ferry's bounded decoding, for every
 * client of the process. Idempotent. Returns false if kafkajs is laid out otherwise
 * (a kafkajs version whose files moved): reading then stays unbounded, and the tests say so.
 */
export function installBoundedFetch(): boolean {
  if (installed) return true;
  let fetchModule: FetchRequestModule;
  try {
    fetchModule = require('kafkajs/src/protocol/requests/fetch/index.js') as FetchRequestModule;
  } catch {
    return false;
  }
  const original = fetchModule.protocol.bind(fetchModule);
  fetchModule.protocol = ({ version }) => {
    const build = original({ version });
    if (version !== BOUNDED_VERSION) return build;
    return (args) => {
      const built = build(args);
      const offsets = fetchOffsets(args.topics);
      const response: FetchResponseModule = {
        decode: (raw) => decodeV11(raw, offsets),
        parse: (data) => built.response.parse(data),
      };
      return { ...built, response };
    };
  };
  installed = true;
  return true;
}

export { boundedDecodingCounts } from './bounded-batches.ts';
