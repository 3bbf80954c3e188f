/**
 * The two requests that let one transactional producer commit several partitions' offsets
 * safely, which kafkajs 2.2.4 cannot encode (it stops at TxnOffsetCommit v1 and OffsetFetch
 * v4):
 * - TxnOffsetCommit v3 carries the consumer group's generation and member id: the group
 *   coordinator refuses the offsets of a member that is no longer in the group, or of an
 *   older generation (ILLEGAL_GENERATION, UNKNOWN_MEMBER_ID, FENCED_INSTANCE_ID), so a
 *   replica that lost its partitions in a rebalance cannot commit them, whichever
 *   transactional id it uses. This is how a producer per replica is fenced, instead of a
 *   transactional id per partition whose next holder bumps its epoch.
 * - OffsetFetch v7 with `require_stable` answers UNSTABLE_OFFSET_COMMIT for a partition
 *   while another producer's transaction holds an offset of it not yet committed or
 *   aborted: a partition's new owner reads its offset once the previous owner's last
 *   transaction has ended.
 * Both are flexible versions (compact strings and arrays, tagged fields). kafkajs writes
 * request header v1, so the body starts with the empty tagged fields of header v2; the
 * answer's header tagged fields come first in what kafkajs hands the decoder.
 */
import { createRequire } from 'node:module';
import type { GroupMembership } from './kafka-port.ts';

export type { GroupMembership } from './kafka-port.ts';

const require = createRequire(import.meta.url);

/** kafkajs's protocol codecs (CommonJS, internal; pinned with kafkajs). */
interface KafkajsEncoder {
  writeInt16(value: number): KafkajsEncoder;
  writeInt32(value: number): KafkajsEncoder;
  writeInt64(value: string | number): KafkajsEncoder;
  writeBoolean(value: boolean): KafkajsEncoder;
  writeUVarInt(value: number): KafkajsEncoder;
  writeUVarIntString(value: string | null): KafkajsEncoder;
  writeUVarIntArray(items: KafkajsEncoder[] | null, type?: 'object'): KafkajsEncoder;
}
interface KafkajsDecoder {
  readInt16(): number;
  readInt32(): number;
  readInt64(): { toString(): string };
  readUVarIntString(): string | null;
  readUVarIntArray<T>(reader: (decoder: KafkajsDecoder) => T): T[] | null;
  readTaggedFields(): unknown;
}
type EncoderClass = new () => KafkajsEncoder;
type DecoderClass = new (buffer: Buffer) => KafkajsDecoder;
interface ProtocolErrors {
  failure(code: number): boolean;
  createErrorFromCode(code: number): Error;
}

const Encoder = require('kafkajs/src/protocol/encoder.js') as EncoderClass;
const Decoder = require('kafkajs/src/protocol/decoder.js') as DecoderClass;
const { failure, createErrorFromCode } = require('kafkajs/src/protocol/error.js') as ProtocolErrors;

/** kafkajs's error for a protocol error code (its `type`, e.g. UNSTABLE_OFFSET_COMMIT, and `retriable`). */
export function protocolError(code: number): Error {
  return createErrorFromCode(code);
}

const TXN_OFFSET_COMMIT = 28;
const OFFSET_FETCH = 9;
/** An offset committed without the leader epoch it was read under. */
const NO_LEADER_EPOCH = -1;

/** A request as kafkajs's connection sends it (`broker.connectionPool.send`). */
export interface ProtocolRequest<T> {
  readonly request: {
    readonly apiKey: number;
    readonly apiVersion: number;
    readonly apiName: string;
    encode(): Promise<KafkajsEncoder>;
  };
  readonly response: {
    decode(payload: Buffer): Promise<T>;
    parse(decoded: T): Promise<T>;
  };
}

export interface TxnOffsetCommitV3 extends GroupMembership {
  readonly transactionalId: string;
  readonly groupId: string;
  readonly producerId: string | number;
  readonly producerEpoch: number;
  readonly topics: readonly {
    readonly topic: string;
    readonly partitions: readonly {
      readonly partition: number;
      readonly offset: string;
      readonly metadata: string | null;
    }[];
  }[];
}

export interface PartitionResult {
  readonly partition: number;
  readonly errorCode: number;
}
export interface TxnOffsetCommitAnswer {
  readonly topics: readonly { readonly topic: string; readonly partitions: PartitionResult[] }[];
}

/** The empty tagged fields that end every flexible structure. */
function endStruct(encoder: KafkajsEncoder): KafkajsEncoder {
  return encoder.writeUVarInt(0);
}

/** A compact array of topics, each its name and a compact array of its partitions. */
function writeTopics<P>(
  topics: readonly { readonly topic: string; readonly partitions: readonly P[] }[],
  writePartition: (partition: P) => KafkajsEncoder,
): KafkajsEncoder[] {
  return topics.map(({ topic, partitions }) =>
    endStruct(
      new Encoder()
        .writeUVarIntString(topic)
        .writeUVarIntArray(partitions.map(writePartition), 'object'),
    ),
  );
}

/**
 * The start of a flexible answer: the header's tagged fields, the throttle time, then its
 * topics, each with its partitions read by `readPartition` (tagged fields after each).
 */
function readTopics<P>(
  decoder: KafkajsDecoder,
  readPartition: (decoder: KafkajsDecoder) => P,
): { topic: string; partitions: P[] }[] {
  decoder.readTaggedFields();
  decoder.readInt32(); // throttle_time_ms
  return (
    decoder.readUVarIntArray((d) => {
      const topic = d.readUVarIntString() ?? '';
      const partitions =
        d.readUVarIntArray((p) => {
          const partition = readPartition(p);
          p.readTaggedFields();
          return partition;
        }) ?? [];
      d.readTaggedFields();
      return { topic, partitions };
    }) ?? []
  );
}

/**
 * TxnOffsetCommit v3: the offsets join the producer's open transaction, refused unless
 * the member is in the group at that generation. Partition errors reject with kafkajs's
 * error of that code (its `type`, e.g. ILLEGAL_GENERATION, and `retriable`).
 */
export function txnOffsetCommitV3(
  commit: TxnOffsetCommitV3,
): ProtocolRequest<TxnOffsetCommitAnswer> {
  return {
    request: {
      apiKey: TXN_OFFSET_COMMIT,
      apiVersion: 3,
      apiName: 'TxnOffsetCommit',
      encode: async () => {
        const topics = writeTopics(commit.topics, (p) =>
          endStruct(
            new Encoder()
              .writeInt32(p.partition)
              .writeInt64(p.offset)
              .writeInt32(NO_LEADER_EPOCH)
              .writeUVarIntString(p.metadata),
          ),
        );
        return endStruct(
          new Encoder()
            // The request header's tagged fields (header v2), which kafkajs does not write.
            .writeUVarInt(0)
            .writeUVarIntString(commit.transactionalId)
            .writeUVarIntString(commit.groupId)
            .writeInt64(commit.producerId)
            .writeInt16(commit.producerEpoch)
            .writeInt32(commit.generationId)
            .writeUVarIntString(commit.memberId)
            .writeUVarIntString(commit.groupInstanceId)
            .writeUVarIntArray(topics, 'object'),
        );
      },
    },
    response: {
      decode: async (payload) => ({
        topics: readTopics(new Decoder(payload), (p) => ({
          partition: p.readInt32(),
          errorCode: p.readInt16(),
        })),
      }),
      parse: async (answer) => {
        for (const { partitions } of answer.topics) {
          const failed = partitions.find((p) => failure(p.errorCode));
          if (failed) throw createErrorFromCode(failed.errorCode);
        }
        return answer;
      },
    },
  };
}

export interface StableOffset {
  readonly partition: number;
  /** The committed offset, `-1` when none. */
  readonly offset: string;
  readonly metadata: string | null;
  /** 0, or the partition's error: UNSTABLE_OFFSET_COMMIT (88) while a transaction holds it. */
  readonly errorCode: number;
}
export interface OffsetFetchAnswer {
  readonly errorCode: number;
  readonly topics: readonly { readonly topic: string; readonly partitions: StableOffset[] }[];
}

/**
 * OffsetFetch v7 of the given partitions. With `requireStable` a partition that an open
 * transaction holds an offset of answers UNSTABLE_OFFSET_COMMIT (its `errorCode`; the
 * answer is not rejected for it, so the caller sees which partitions to ask again); a
 * group-level error rejects.
 */
export function offsetFetchV7(request: {
  readonly groupId: string;
  readonly topics: readonly { readonly topic: string; readonly partitions: readonly number[] }[];
  readonly requireStable: boolean;
}): ProtocolRequest<OffsetFetchAnswer> {
  return {
    request: {
      apiKey: OFFSET_FETCH,
      apiVersion: 7,
      apiName: 'OffsetFetch',
      encode: async () => {
        const topics = writeTopics(request.topics, (p) => new Encoder().writeInt32(p));
        return endStruct(
          new Encoder()
            .writeUVarInt(0)
            .writeUVarIntString(request.groupId)
            .writeUVarIntArray(topics, 'object')
            .writeBoolean(request.requireStable),
        );
      },
    },
    response: {
      decode: async (payload) => {
        const decoder = new Decoder(payload);
        const topics = readTopics(decoder, (p) => {
          const partition = p.readInt32();
          const offset = p.readInt64().toString();
          p.readInt32(); // committed_leader_epoch
          const metadata = p.readUVarIntString();
          return { partition, offset, metadata, errorCode: p.readInt16() };
        });
        return { errorCode: decoder.readInt16(), topics };
      },
      parse: async (answer) => {
        if (failure(answer.errorCode)) throw createErrorFromCode(answer.errorCode);
        return answer;
      },
    },
  };
}

/** kafkajs's highest versions of the two requests, as its own tables list them. */
export function kafkajsHighestVersions(): { txnOffsetCommit: number; offsetFetch: number } {
  const highest = (path: string) =>
    Math.max(...(require(path) as { versions: string[] }).versions.map(Number));
  return {
    txnOffsetCommit: highest('kafkajs/src/protocol/requests/txnOffsetCommit/index.js'),
    offsetFetch: highest('kafkajs/src/protocol/requests/offsetFetch/index.js'),
  };
}
