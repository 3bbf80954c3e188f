/**
 * Produces planned records with kcat (librdkafka), not kafkajs: command batches the
 * way other teams' services write them, compressed with a codec of their choice.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { findTool } from '../deploy/external-tools.ts';
import type { PlannedRecord } from './command-mix.ts';

const execFileAsync = promisify(execFile);

/** Every codec Kafka defines. */
export const KAFKA_CODECS = ['gzip', 'snappy', 'lz4', 'zstd'] as const;
export type KafkaCodec = (typeof KAFKA_CODECS)[number];

/**
 * Sends `records` (keyed, no headers, values without tabs or newlines: JSON commands)
 * to `topic` through kcat with `codec`, batched by librdkafka's linger.
 * @throws Error when kcat is missing or exits non-zero.
 */
export async function kcatProduce(
  brokers: string,
  topic: string,
  codec: KafkaCodec,
  records: readonly PlannedRecord[],
): Promise<void> {
  const lines = records.map((record) => {
    const value = record.value?.toString('utf8') ?? '';
    if (/[\t\n]/.test(value) || /[\t\n]/.test(record.key)) {
      throw new Error(`record ${record.key} cannot travel as one kcat line`);
    }
    return `${record.key}\t${value}`;
  });
  const child = execFileAsync(
    findTool('kcat'),
    [
      ...['-P', '-b', brokers, '-t', topic, '-z', codec, '-K', '\t'],
      ...['-X', 'linger.ms=50', '-X', 'enable.idempotence=true'],
      // The Java client's partitioner, which kafkajs's default also is: a key lands on the
      // partition it lands on from the run's own producer. librdkafka's default
      // (consistent_random, CRC32) would put a copy on another partition, where it is
      // not recognised as one.
      ...['-X', 'partitioner=murmur2_random'],
    ],
    { timeout: 60_000 },
  );
  child.child.stdin?.end(`${lines.join('\n')}\n`);
  await child;
}
