/** How the records ferry reads and writes (kafka-port.ts) become kafkajs messages and requests. */

export type { InboundRecord, OutboundRecord, PartitionOffset } from './kafka-port.ts';

import { OVERSIZED_MARKER_HEADER, oversizedOf } from './bounded-fetch.ts';
import type { InboundRecord, OutboundRecord } from './kafka-port.ts';
import type { IHeaders, KafkaMessage } from './kafkajs.ts';
import { headersOf } from './kafkajs-adapters.ts';

export interface TopicSpec {
  readonly topic: string;
  readonly partitions: number;
  readonly replicationFactor: number;
  readonly config?: Readonly<Record<string, string>>;
}

export function inbound(topic: string, partition: number, message: KafkaMessage): InboundRecord {
  const record: InboundRecord = {
    topic,
    partition,
    offset: message.offset,
    key: message.key,
    value: message.value,
    headers: headersOf(message.headers),
    timestamp: message.timestamp,
  };
  const oversized = oversizedOf(message.headers);
  if (oversized === undefined) return record;
  const { [OVERSIZED_MARKER_HEADER]: _marker, ...headers } = record.headers;
  return { ...record, value: null, headers, oversized };
}

/**
 * Bytes of records per produce request at most. kafkajs writes all records of a
 * partition in one request as one record batch, and the broker refuses a batch over
 * `max.message.bytes` (1 MiB by default): a fetched batch of thousands of commands
 * yields more results than that, so they go in several requests.
 */
export const MAX_PRODUCE_REQUEST_BYTES = 512 * 1024;

function sizeOf(value: string | Buffer | null): number {
  if (value === null) return 0;
  return typeof value === 'string' ? Buffer.byteLength(value) : value.length;
}

/** Splits records into consecutive groups of at most `maxBytes` (a larger record alone). */
/** A record's bytes in a produce request, near enough: key, value, headers, 64 of framing. */
export function recordSize(record: OutboundRecord): number {
  let size = sizeOf(record.key) + sizeOf(record.value) + 64;
  for (const [name, value] of Object.entries(record.headers ?? {})) {
    size += name.length + sizeOf(value);
  }
  return size;
}

export function produceChunks(
  records: readonly OutboundRecord[],
  maxBytes: number = MAX_PRODUCE_REQUEST_BYTES,
): OutboundRecord[][] {
  const chunks: OutboundRecord[][] = [];
  let current: OutboundRecord[] = [];
  let bytes = 0;
  for (const record of records) {
    const size = recordSize(record);
    if (current.length > 0 && bytes + size > maxBytes) {
      chunks.push(current);
      current = [];
      bytes = 0;
    }
    current.push(record);
    bytes += size;
  }
  if (current.length > 0) chunks.push(current);
  return chunks;
}

export function toKafkaMessages(records: readonly OutboundRecord[]) {
  const byTopic = new Map<
    string,
    {
      key: string | Buffer | null;
      value: string | Buffer | null;
      headers?: IHeaders;
      partition?: number;
    }[]
  >();
  for (const record of records) {
    let list = byTopic.get(record.topic);
    if (!list) {
      list = [];
      byTopic.set(record.topic, list);
    }
    const message: (typeof list)[number] = { key: record.key, value: record.value };
    if (record.headers) message.headers = { ...record.headers };
    if (record.partition !== undefined) message.partition = record.partition;
    list.push(message);
  }
  return [...byTopic].map(([topic, messages]) => ({ topic, messages }));
}
