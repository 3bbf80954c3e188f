import type { Admin, ITopicConfig } from 'kafkajs';
import { createTopicsAndWait as createTopicsWithLeaders } from '../../src/kafka/topic-leaders.ts';

/** The broker that `npm test` started for this run (test/run.ts). */
export function testBrokers(): string[] {
  const brokers = process.env.FERRY_TEST_KAFKA_BROKERS;
  if (!brokers) {
    throw new Error(
      'FERRY_TEST_KAFKA_BROKERS is not set: run integration tests through `npm test`',
    );
  }
  return brokers.split(',');
}

/** A topic name no other test uses, so test files can run in parallel on one broker. */
export function uniqueTopic(prefix: string): string {
  return `${prefix}.${process.pid}.${Date.now().toString(36)}.${Math.random().toString(36).slice(2, 8)}`;
}

/** Creates topics and waits until every broker shows their leaders (see src/kafka/topic-leaders.ts). */
export function createTopicsAndWait(
  admin: Admin,
  brokers: readonly string[],
  topics: readonly ITopicConfig[],
): Promise<void> {
  return createTopicsWithLeaders(
    admin,
    { clientId: 'test-topic-wait', brokers: [...brokers] },
    topics,
  );
}
