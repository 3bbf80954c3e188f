/**
 * Reads a topic at read_committed from the beginning up to the end offsets it had when asked,
 * and counts its records by key: the receipts benchmark's check that every receipt is there once.
 */
import { Kafka, logLevel } from 'kafkajs';

/** Reads every record of `topic` at read_committed up to its end offsets; counts by key. */
export async function countByKey(brokers: string, topic: string): Promise<Map<string, number>> {
  const kafka = new Kafka({
    clientId: 'ferry-bench-receipts',
    brokers: [brokers],
    logLevel: logLevel.NOTHING,
  });
  const admin = kafka.admin();
  await admin.connect();
  const ends = await admin.fetchTopicOffsets(topic);
  await admin.disconnect();
  const total = ends.reduce((sum, p) => sum + Number(p.high), 0);
  const counts = new Map<string, number>();
  let seen = 0;
  const consumer = kafka.consumer({
    groupId: `${topic}.check`,
    readUncommitted: false,
    maxWaitTimeInMs: 100,
  });
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  const done = new Promise<void>((resolveDone, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`read ${seen} of ${total} status records in 60 s`)),
      60_000,
    );
    if (total === 0) {
      clearTimeout(timer);
      resolveDone();
    }
    void consumer.run({
      eachBatch: async ({ batch }) => {
        for (const message of batch.messages) {
          const key = message.key?.toString('utf8') ?? '';
          counts.set(key, (counts.get(key) ?? 0) + 1);
          seen += 1;
        }
        if (seen >= total) {
          clearTimeout(timer);
          resolveDone();
        }
      },
    });
  });
  try {
    await done;
  } finally {
    await consumer.disconnect();
  }
  return counts;
}
