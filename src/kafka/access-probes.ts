/**
 * The two probes of the start-up access check (kafka-access.ts) that need more than one
 * admin call: reading as a group member, and writing in transactions. Each does what
 * ferry will do later, on throwaway resources under the same ACL prefixes, and leaves
 * nothing a read_committed reader can see.
 */
import type { Admin, Kafka } from 'kafkajs';
import { kafkaRefusalOf } from './kafka-security.ts';

/** Runs one probe step: classifies its failure, retries passing errors (KafkaAccessCheck). */
export type Step = <T>(what: string, action: () => Promise<T>) => Promise<T>;

/**
 * A member of a throwaway group fetches `topics` once (Group READ, Topic READ), then
 * the group is deleted (Group DELETE), as the dead-letter replay does with its readers.
 */
export async function probeReading(
  kafka: Kafka,
  admin: Admin,
  step: Step,
  probe: { readonly groupId: string; readonly topics: readonly string[] },
): Promise<void> {
  const consumer = kafka.consumer({
    groupId: probe.groupId,
    readUncommitted: false,
    maxWaitTimeInMs: 100,
    maxBytes: 1024,
    maxBytesPerPartition: 1024,
    retry: { retries: 5 },
  });
  const fetched = new Promise<void>((resolve, reject) => {
    consumer.on(consumer.events.FETCH, () => resolve());
    consumer.on(consumer.events.CRASH, (event) => {
      if (!event.payload.restart) reject(event.payload.error);
    });
  });
  fetched.catch(() => undefined);
  try {
    await step(`reading ${probe.topics.join(' and ')}`, async () => {
      await consumer.connect();
      await consumer.subscribe({ topics: [...probe.topics], fromBeginning: false });
      await consumer.run({ autoCommit: false, eachBatch: async () => undefined });
      await fetched;
    });
  } finally {
    await consumer.disconnect().catch(() => undefined);
  }
  await step('deleting the dead-letter replay reader group', async () => {
    try {
      await admin.deleteGroups([probe.groupId]);
    } catch (error: unknown) {
      // A member that never committed may leave no group behind: only a refusal matters.
      if (kafkaRefusalOf(error)) throw error;
    }
  });
}

/**
 * Under `transactionalId` (TransactionalId WRITE), one aborted transaction per topic that
 * adds partition 0 of it (Topic WRITE); then `replayTransactionalId` is initialised. An
 * aborted record is never visible at read_committed, which is how every reader of
 * ferry's transactional topics must read.
 */
export async function probeTransactions(
  kafka: Kafka,
  step: Step,
  probe: {
    readonly transactionalId: string;
    readonly topics: readonly string[];
    readonly replayTransactionalId: string;
  },
): Promise<void> {
  const producer = kafka.producer({
    transactionalId: probe.transactionalId,
    idempotent: true,
    maxInFlightRequests: 1,
    retry: { retries: 1 },
  });
  // One transaction per topic: a refused topic among several is reported by Kafka as
  // OPERATION_NOT_ATTEMPTED for the others, and kafkajs may surface that one instead.
  for (const topic of probe.topics) {
    await step(`writing to ${topic} in a transaction`, async () => {
      try {
        await producer.connect();
        const transaction = await producer.transaction();
        try {
          await transaction.send({
            topic,
            acks: -1,
            messages: [{ partition: 0, key: 'ferry-preflight', value: null }],
          });
        } catch (error: unknown) {
          // The refusal is what matters; an abort failing after it must not hide it.
          await transaction.abort().catch(() => undefined);
          throw error;
        }
        await transaction.abort();
      } catch (error: unknown) {
        await producer.disconnect().catch(() => undefined);
        throw error;
      }
    });
  }
  await producer.disconnect().catch(() => undefined);
  const replay = kafka.producer({
    transactionalId: probe.replayTransactionalId,
    idempotent: true,
    maxInFlightRequests: 1,
    retry: { retries: 1 },
  });
  await step('initialising the dead-letter replay transactional id', async () => {
    try {
      await replay.connect();
      // Nothing is added, so the abort stays local; the begin sent InitProducerId.
      const transaction = await replay.transaction();
      await transaction.abort();
    } finally {
      await replay.disconnect().catch(() => undefined);
    }
  });
}
