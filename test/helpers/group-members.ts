/**
 * Plain kafkajs clients for tests of group fencing: a consumer that joins a group and
 * commits nothing itself (its membership is what offsets are fenced by), and a reader of
 * everything readable at read_committed.
 */
import type { Consumer, Kafka } from '../../src/kafka/kafkajs.ts';
import { eventually } from './fleet.ts';
import { uniqueTopic } from './kafka.ts';

/**
 * A kafkajs consumer of `groupId` on `topic` that commits nothing itself, pushed to
 * `consumers` (the caller disconnects them); resolves once it joined, with its member id.
 */
export async function joinedMember(
  kafka: Kafka,
  groupId: string,
  topic: string,
  consumers: Consumer[],
): Promise<{ consumer: Consumer; memberId: () => string | undefined }> {
  const consumer = kafka.consumer({ groupId, sessionTimeout: 10_000, heartbeatInterval: 300 });
  consumers.push(consumer);
  let memberId: string | undefined;
  consumer.on(consumer.events.GROUP_JOIN, (event) => {
    memberId = event.payload.memberId;
  });
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  await consumer.run({ autoCommit: false, eachBatch: async () => undefined });
  await eventually('the member joined', async () => memberId);
  return { consumer, memberId: () => memberId };
}

/** Every value of `topic` a read_committed reader sees, read until the value `last` came. */
export async function readableValues(kafka: Kafka, topic: string, last: string): Promise<string[]> {
  const reader = kafka.consumer({ groupId: uniqueTopic('readable'), readUncommitted: false });
  const values: string[] = [];
  await reader.connect();
  try {
    await reader.subscribe({ topic, fromBeginning: true });
    await reader.run({
      eachMessage: async ({ message }) => {
        values.push(message.value?.toString() ?? '');
      },
    });
    await eventually(`the reader saw ${last}`, async () =>
      values.includes(last) ? true : undefined,
    );
  } finally {
    await reader.disconnect();
  }
  return values;
}
