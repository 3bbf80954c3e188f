/**
 * Waiting for new topics on a cluster. kafkajs's own `createTopics({ waitForLeaders })`
 * asks one broker and gives up when that broker has not heard of the topic yet
 * (UNKNOWN_TOPIC_OR_PARTITION); later, any client of ferry's may ask any broker for
 * metadata (a consumer's subscribe, a producer's first send) and fail the same way.
 */
import { type Admin, type ITopicConfig, Kafka, type KafkaConfig, logLevel } from './kafkajs.ts';

/** A topic just created, and how many partitions it was created with. */
export interface NewTopic {
  readonly topic: string;
  readonly partitions: number;
}

/**
 * Resolves once every broker of the cluster answers metadata with a leader for every
 * partition of `topics`; a broker that does not know a topic yet is asked again.
 * @throws Error after `timeoutMs`.
 */
export async function waitForLeadersOnEveryBroker(
  admin: Admin,
  config: KafkaConfig,
  topics: readonly NewTopic[],
  timeoutMs = 30_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let lastProblem = '';
  while (Date.now() < deadline) {
    try {
      const { brokers } = await admin.describeCluster();
      const unaware: string[] = [];
      for (const { host, port } of brokers) {
        if (!(await leadersKnownTo(config, `${host}:${port}`, topics)))
          unaware.push(`${host}:${port}`);
      }
      if (unaware.length === 0) return;
      lastProblem = `${unaware.join(', ')} did not show a leader for every partition yet`;
    } catch (error: unknown) {
      lastProblem = error instanceof Error ? error.message : String(error);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`the new topics had no leaders after ${timeoutMs} ms: ${lastProblem}`);
}

/** Whether the broker at `address` itself answers with a leader for every partition of `topics`. */
async function leadersKnownTo(
  config: KafkaConfig,
  address: string,
  topics: readonly NewTopic[],
): Promise<boolean> {
  // A fresh client asks the one broker it bootstrapped from.
  const probe = new Kafka({
    ...config,
    brokers: [address],
    logLevel: logLevel.NOTHING,
    retry: { retries: 0 },
  }).admin();
  try {
    await probe.connect();
    const metadata = await probe.fetchTopicMetadata({ topics: topics.map((t) => t.topic) });
    return topics.every((wanted) => {
      const partitions = metadata.topics.find((t) => t.name === wanted.topic)?.partitions ?? [];
      return partitions.length === wanted.partitions && partitions.every((p) => p.leader >= 0);
    });
  } catch {
    return false;
  } finally {
    await probe.disconnect().catch(() => undefined);
  }
}

/** Creates `topics` and resolves once every broker shows a leader for each of their partitions. */
export async function createTopicsAndWait(
  admin: Admin,
  config: KafkaConfig,
  topics: readonly ITopicConfig[],
): Promise<void> {
  await admin.createTopics({ waitForLeaders: false, topics: [...topics] });
  await waitForLeadersOnEveryBroker(
    admin,
    config,
    topics.map((t) => ({ topic: t.topic, partitions: t.numPartitions ?? 1 })),
  );
}
