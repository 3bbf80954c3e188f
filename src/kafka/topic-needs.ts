/**
 * Every topic ferry uses, what it creates it with when it is missing, and the operations
 * its ACLs must allow (the Topic rows of docs/kafka-security.md). Kafka hides a topic
 * whose Describe is not allowed as if it did not exist, and only Read, Write, Delete and
 * Alter imply Describe: the operations here are what tells a missing topic from a
 * missing grant, and which grant.
 */
import type { AclNeed, AclOperation } from './acl-grants.ts';
import { type ExpectedTopicSettings, topicConfigEntries } from './topic-settings.ts';

export interface FerryTopics {
  readonly commands: string;
  readonly results: string;
  readonly status: string;
  readonly dlq: string;
  /** Raw callbacks that could not be read as status events; written without transactions. */
  readonly unparsedCallbacks: string;
  /** The fleet's control topic: one partition, compacted. */
  readonly control: string;
  /** Duplicate suppression's topic, when it is on; its records outlive the window by at most a segment. */
  readonly dedupe?: { readonly topic: string; readonly windowMs: number } | undefined;
  /** The urgent lane, when there is one: its commands topic, and its dedupe topic when dedupe is on. */
  readonly urgent?: { readonly commands: string; readonly dedupe?: string | undefined } | undefined;
  /**
   * Final status tracking, when it is on: each lane's tracking topic (co-partitioned with
   * its commands) and the final status topic.
   */
  readonly tracking?:
    | { readonly topic: string; readonly urgent?: string | undefined; readonly final: string }
    | undefined;
}

export interface TopicNeed {
  readonly topic: string;
  /** The operations ferry uses on it that imply Describe. */
  readonly operations: readonly Extract<AclOperation, 'Read' | 'Write'>[];
  /** Whether start-up reads its settings (Topic DescribeConfigs). */
  readonly describeConfigs: boolean;
  /** Whether ferry writes results, statuses or dead letters to it (FERRY_RECORD_MAX_BYTES applies). */
  readonly writtenByFerry: boolean;
  /** Partitions and settings when ferry creates it. */
  readonly partitions: number;
  readonly config: Readonly<Record<string, string>>;
}

/** The settings ferry creates the control topic with, whatever the others get. */
export const CONTROL_TOPIC_CONFIG = {
  // Compacted: the latest record per key is the state; segments roll every 10 minutes so
  // that the replicas' frequent state records get compacted away.
  'cleanup.policy': 'compact',
  'segment.ms': '600000',
} as const;

/**
 * The dedupe topic's settings: compacted (one record per id) and deleted past the window,
 * in segments of at most an hour, so an id is kept for the window and at most an hour more.
 */
export function dedupeTopicConfig(windowMs: number): Record<string, string> {
  return {
    'cleanup.policy': 'compact,delete',
    'retention.ms': String(windowMs),
    'segment.ms': String(Math.min(windowMs, 3_600_000)),
  };
}

/**
 * The tracking topic's settings: compacted, never deleted by age (a message waits there
 * until its final status, however long ferry was down); segments of an hour, so what was
 * finalized is compacted away.
 */
export const TRACKING_TOPIC_CONFIG = {
  'cleanup.policy': 'compact',
  'segment.ms': '3600000',
} as const;

/** Each of ferry's topics with what ferry does with it. */
export function topicNeeds(topics: FerryTopics, settings: ExpectedTopicSettings): TopicNeed[] {
  const common = {
    partitions: settings.partitions,
    config: Object.fromEntries(topicConfigEntries(settings).map((e) => [e.name, e.value])),
  };
  const plain = (
    topic: string,
    operations: TopicNeed['operations'],
    writtenByFerry: boolean,
  ): TopicNeed => ({ topic, operations, describeConfigs: true, writtenByFerry, ...common });
  const dedupeNeed = (topic: string, windowMs: number): TopicNeed => ({
    topic,
    operations: ['Read', 'Write'],
    // Its max.message.bytes lets the start-up check prove Write without writing.
    describeConfigs: true,
    writtenByFerry: false,
    // As many partitions as the commands: each commands partition's ids in its own.
    partitions: settings.partitions,
    config: { ...common.config, ...dedupeTopicConfig(windowMs) },
  });
  const dedupe: TopicNeed[] = topics.dedupe
    ? [
        dedupeNeed(topics.dedupe.topic, topics.dedupe.windowMs),
        ...(topics.urgent?.dedupe
          ? [dedupeNeed(topics.urgent.dedupe, topics.dedupe.windowMs)]
          : []),
      ]
    : [];
  const trackingNeed = (topic: string): TopicNeed => ({
    topic,
    operations: ['Read', 'Write'],
    describeConfigs: true,
    writtenByFerry: false,
    partitions: settings.partitions,
    config: { ...common.config, ...TRACKING_TOPIC_CONFIG },
  });
  const tracking: TopicNeed[] = topics.tracking
    ? [
        trackingNeed(topics.tracking.topic),
        ...(topics.tracking.urgent ? [trackingNeed(topics.tracking.urgent)] : []),
        plain(topics.tracking.final, ['Write'], true),
      ]
    : [];
  return [
    ...dedupe,
    ...tracking,
    plain(topics.commands, ['Read', 'Write'], false),
    // Read only: a dead-letter replay writes to the bulk commands topic.
    ...(topics.urgent ? [plain(topics.urgent.commands, ['Read'], false)] : []),
    plain(topics.results, ['Write'], true),
    plain(topics.status, ['Write'], true),
    plain(topics.dlq, ['Read', 'Write'], true),
    plain(topics.unparsedCallbacks, ['Write'], false),
    {
      topic: topics.control,
      operations: ['Read', 'Write'],
      describeConfigs: false,
      writtenByFerry: false,
      // One partition, so every replica reads the control records in one order.
      partitions: 1,
      config: {
        'min.insync.replicas': String(settings.minInsyncReplicas),
        ...CONTROL_TOPIC_CONFIG,
      },
    },
  ];
}

/**
 * The grant that makes `need.topic` visible: ferry may not Describe it, so none of the
 * operations that imply Describe is allowed, and all of them are missing.
 */
export function describeGrant(need: TopicNeed): AclNeed {
  return { resource: 'Topic', name: need.topic, pattern: 'literal', operations: need.operations };
}

/** The `kafka-topics.sh` line that creates `need` as ferry would. */
export function createTopicCommand(need: TopicNeed, replicationFactor: number): string {
  return [
    'kafka-topics.sh --bootstrap-server "$BOOTSTRAP" --command-config admin.properties --create',
    `--topic ${need.topic} --partitions ${need.partitions} --replication-factor ${replicationFactor}`,
    ...Object.entries(need.config).map(([name, value]) => `--config ${name}=${value}`),
  ].join(' ');
}
