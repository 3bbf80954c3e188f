/**
 * Sending that checks every partition was acknowledged. kafkajs retries a failed
 * produce request inside one send, but on the retry it skips every broker that
 * already answered — even when a leader change has since moved the failed
 * partitions onto one of them. The send then resolves although those records were
 * never written (seen on a three-node cluster with the leader killed mid-send). So
 * ferry picks each record's partition itself, with kafkajs's own default
 * partitioner (Java's murmur2 of the key, so placement is unchanged), checks that
 * every partition it wrote to is in the answer, and sends the rest again.
 */
import { FerryError } from '../errors.ts';
import {
  type Message,
  Partitioners,
  type PartitionMetadata,
  type Producer,
  type RecordMetadata,
} from './kafkajs.ts';

/** How many partitions a topic has (cached by the caller). */
export type PartitionCount = (topic: string) => Promise<number>;

export interface TopicMessages {
  readonly topic: string;
  readonly messages: Message[];
}

/** Sends of the skipped partitions after the first one, before giving up. */
const MAX_RESENDS = 5;

/** A stand-in for the metadata the default partitioner reads: only the count and availability matter. */
function partitionsOf(count: number): PartitionMetadata[] {
  return Array.from({ length: count }, (_, partitionId) => ({
    partitionErrorCode: 0,
    partitionId,
    leader: 0,
    replicas: [],
    isr: [],
  }));
}

/**
 * Gives every message an explicit partition: the one its caller chose (modulo the count),
 * else the one kafkajs's default partitioner would.
 */
export class PartitionAssigner {
  readonly #partitioner = Partitioners.DefaultPartitioner();
  readonly #count: PartitionCount;

  constructor(count: PartitionCount) {
    this.#count = count;
  }

  async assign(batches: readonly TopicMessages[]): Promise<TopicMessages[]> {
    const assigned: TopicMessages[] = [];
    for (const { topic, messages } of batches) {
      const count = await this.#count(topic);
      const partitionMetadata = partitionsOf(count);
      assigned.push({
        topic,
        messages: messages.map((message) => ({
          ...message,
          // A partition chosen by the caller wraps around a topic with fewer partitions.
          partition:
            message.partition === undefined
              ? this.#partitioner({ topic, partitionMetadata, message })
              : message.partition % count,
        })),
      });
    }
    return assigned;
  }
}

/** The messages of `sent` whose topic-partition the answer does not acknowledge. */
export function unacknowledged(
  sent: readonly TopicMessages[],
  answer: readonly RecordMetadata[],
): TopicMessages[] {
  const acknowledged = new Set(
    answer.filter((a) => a.errorCode === 0).map((a) => `${a.topicName}\u0000${a.partition}`),
  );
  return sent
    .map(({ topic, messages }) => ({
      topic,
      messages: messages.filter((m) => !acknowledged.has(`${topic}\u0000${m.partition}`)),
    }))
    .filter((batch) => batch.messages.length > 0);
}

/**
 * One `sendBatch` (inside a transaction or not), then again for the partitions the
 * answer left out. Safe to repeat: an idempotent producer's records of a partition
 * keep their sequence numbers, so a record the old leader did replicate is not
 * written twice. @throws FerryError `kafka` when partitions stay unacknowledged.
 */
export async function sendAcknowledged(
  send: Pick<Producer, 'sendBatch'>['sendBatch'],
  batches: readonly TopicMessages[],
  options: Omit<Parameters<Producer['sendBatch']>[0], 'topicMessages'>,
  onResend: (partitions: readonly string[]) => void = () => undefined,
): Promise<void> {
  let pending = [...batches];
  for (let resend = 0; pending.length > 0; resend += 1) {
    if (resend > 0) onResend(partitionNames(pending));
    if (resend > MAX_RESENDS) {
      throw new FerryError(
        'kafka',
        `records of ${partitionNames(pending).join(', ')} were not acknowledged after ${MAX_RESENDS} resends`,
      );
    }
    const answer = await send({ ...options, topicMessages: pending });
    pending = unacknowledged(pending, answer);
  }
}

function partitionNames(batches: readonly TopicMessages[]): string[] {
  return batches.flatMap(({ topic, messages }) => [
    ...new Set(messages.map((m) => `${topic}[${m.partition}]`)),
  ]);
}
