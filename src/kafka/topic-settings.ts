/**
 * What ferry expects of its topics' settings, judged against what the cluster reports:
 * settings that cannot work stop the start, settings weaker than configured are warned
 * about (docs/kafka-security.md, Topic settings). Pure: the access check fetches.
 */
import { FerryError } from '../errors.ts';

/** What ferry creates topics with, and what existing ones are compared to. */
export interface ExpectedTopicSettings {
  readonly partitions: number;
  readonly replicationFactor: number;
  readonly minInsyncReplicas: number;
  readonly maxMessageBytes?: number;
}

/** One topic as the cluster describes it. */
export interface ActualTopicSettings {
  readonly topic: string;
  /** The fewest replicas of any of its partitions. */
  readonly replicas: number;
  readonly minInsyncReplicas: number;
  readonly maxMessageBytes?: number;
  /** Whether ferry writes results, statuses or dead letters to it (bounded by the record size). */
  readonly writtenByFerry: boolean;
}

/** A topic setting that differs from what ferry expects but still works. */
export interface TopicSettingWarning {
  readonly topic: string;
  readonly setting: string;
  readonly actual: number;
  readonly expected: number;
}

/** The `configEntries` of a topic ferry creates. */
export function topicConfigEntries(expected: ExpectedTopicSettings) {
  return [
    { name: 'min.insync.replicas', value: String(expected.minInsyncReplicas) },
    ...(expected.maxMessageBytes
      ? [{ name: 'max.message.bytes', value: String(expected.maxMessageBytes) }]
      : []),
  ];
}

/**
 * @returns the settings weaker than expected.
 * @throws FerryError `kafka_topic_settings` for a setting that cannot work.
 */
export function judgeTopicSettings(
  topics: readonly ActualTopicSettings[],
  expected: ExpectedTopicSettings,
  recordMaxBytes: number,
): TopicSettingWarning[] {
  const warnings: TopicSettingWarning[] = [];
  for (const { topic, replicas, minInsyncReplicas, maxMessageBytes, writtenByFerry } of topics) {
    if (minInsyncReplicas > replicas) {
      throw new FerryError(
        'kafka_topic_settings',
        `topic ${topic} has min.insync.replicas=${minInsyncReplicas} but only ${replicas} replicas: no write to it can ever be acknowledged`,
        { retryable: false },
      );
    }
    if (writtenByFerry && maxMessageBytes !== undefined && maxMessageBytes < recordMaxBytes) {
      throw new FerryError(
        'kafka_topic_settings',
        `topic ${topic} has max.message.bytes=${maxMessageBytes}, below FERRY_RECORD_MAX_BYTES=${recordMaxBytes}: a large record would be refused; lower FERRY_RECORD_MAX_BYTES or raise the topic's limit`,
        { retryable: false },
      );
    }
    if (replicas < expected.replicationFactor) {
      warnings.push({
        topic,
        setting: 'replication.factor',
        actual: replicas,
        expected: expected.replicationFactor,
      });
    }
    if (minInsyncReplicas < expected.minInsyncReplicas) {
      warnings.push({
        topic,
        setting: 'min.insync.replicas',
        actual: minInsyncReplicas,
        expected: expected.minInsyncReplicas,
      });
    }
  }
  return warnings;
}
