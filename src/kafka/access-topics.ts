/**
 * The topic half of the start-up access check (kafka-access.ts): creates the topics
 * ferry uses that are missing, then describes every topic it may describe and judges
 * its replicas and settings against the configured ones. Kafka hides a topic ferry may
 * not Describe as if it did not exist, so a topic missing from the listing is asked for
 * alone, which tells a missing topic from a missing grant; a topic ferry may not create
 * is refused with both fixes, the command that creates it and the grant that would let
 * ferry do it. Each topic's `max.message.bytes` is handed back for the write probe.
 */
import { FerryError } from '../errors.ts';
import type { Logger } from '../observability/logger.ts';
import type { AccessSteps } from './access-steps.ts';
import { aclCommand, missingAcl } from './acl-grants.ts';
import { kafkaError, kafkaRefusalOf } from './kafka-security.ts';
import kafkajs, { type Admin, type KafkaConfig } from './kafkajs.ts';
import { createTopicsAndWait } from './topic-leaders.ts';
import { createTopicCommand, describeGrant, type TopicNeed } from './topic-needs.ts';
import {
  type ExpectedTopicSettings,
  judgeTopicSettings,
  type TopicSettingWarning,
} from './topic-settings.ts';

/** What the topic probes need of the access check. */
export interface TopicProbeContext {
  readonly steps: AccessSteps;
  readonly log: Logger;
  /** Who the grants in refusal lines are for. */
  readonly principal: string;
  /** Brokers, client id, TLS and SASL, for the wait that asks every broker. */
  readonly connection: KafkaConfig;
  readonly needs: readonly TopicNeed[];
  readonly topicSettings: ExpectedTopicSettings;
  /** The largest record ferry writes (FERRY_RECORD_MAX_BYTES). */
  readonly recordMaxBytes: number;
}

/** What describing the topics found. */
export interface TopicSettingsFound {
  /** The settings that differ from the expected ones (also logged as warnings). */
  readonly warnings: TopicSettingWarning[];
  /** `max.message.bytes` of each topic as the cluster described it (for the write probe). */
  readonly maxMessageBytes: ReadonlyMap<string, number>;
}

/**
 * Creates the topics that are missing. A broker that dies meanwhile (a rolling restart)
 * is a passing error: listing and creating are tried again until the probe's deadline.
 * A try is not cut short: its own wait for the new leaders lasts up to 30 s.
 */
export async function ensureTopics(admin: Admin, context: TopicProbeContext): Promise<void> {
  await context.steps.run(
    'creating the missing topics',
    () => createMissingTopics(admin, context),
    undefined,
    { timeAttempts: false },
  );
}

async function createMissingTopics(admin: Admin, context: TopicProbeContext): Promise<void> {
  const { steps, principal } = context;
  const visible = new Set(await steps.run('listing topics', () => admin.listTopics()));
  const missing: TopicNeed[] = [];
  for (const need of context.needs.filter((n) => !visible.has(n.topic))) {
    if (await hidden(admin, need)) {
      throw missingAcl(
        describeGrant(need),
        principal,
        `TOPIC_AUTHORIZATION_FAILED; ferry may not Describe topic ${need.topic}, which any of these operations allows; whether it exists Kafka does not say`,
      );
    }
    missing.push(need);
  }
  if (missing.length === 0) return;
  try {
    // kafkajs's own wait asks one broker; this one asks every broker.
    await createTopicsAndWait(
      admin,
      context.connection,
      missing.map((need) => ({
        topic: need.topic,
        numPartitions: need.partitions,
        replicationFactor: context.topicSettings.replicationFactor,
        configEntries: Object.entries(need.config).map(([name, value]) => ({ name, value })),
      })),
    );
    context.log.info({ topics: missing.map((n) => n.topic) }, 'created the missing topics');
  } catch (error: unknown) {
    // Another replica, or an earlier try whose answer was lost, created them meanwhile.
    if (error instanceof Error && /already exists/i.test(error.message)) return;
    const refused = kafkaRefusalOf(error);
    if (refused?.refusal !== 'kafka_authorization') throw kafkaError(error, 'creating topics');
    throw cannotCreate(missing, context, refused.detail, error);
  }
}

/**
 * Whether Kafka refuses to say anything about the topic (no Describe) rather than
 * answering that it does not exist; the admin client never creates it by asking.
 */
async function hidden(admin: Admin, need: TopicNeed): Promise<boolean> {
  try {
    await admin.fetchTopicMetadata({ topics: [need.topic] });
    // Listed meanwhile: created by another replica.
    return false;
  } catch (error: unknown) {
    if ((error as { type?: unknown }).type === 'UNKNOWN_TOPIC_OR_PARTITION') return false;
    if (kafkaRefusalOf(error)?.refusal === 'kafka_authorization') return true;
    throw error;
  }
}

/** The refusal of topics that do not exist and ferry may not create: both fixes, pasteable. */
function cannotCreate(
  missing: readonly TopicNeed[],
  context: TopicProbeContext,
  detail: string,
  cause: unknown,
): FerryError {
  const { principal } = context;
  const { replicationFactor } = context.topicSettings;
  const create = missing.map((need) => createTopicCommand(need, replicationFactor)).join('; ');
  const grants = missing
    .map((need) =>
      aclCommand(
        { resource: 'Topic', name: need.topic, pattern: 'literal', operations: ['Create'] },
        principal,
      ),
    )
    .join('; ');
  return new FerryError(
    'kafka_authorization',
    `Kafka denied an operation ferry needs: an ACL is missing: topic${missing.length > 1 ? 's' : ''} ${missing.map((n) => n.topic).join(', ')} do${missing.length > 1 ? '' : 'es'} not exist and ${principal} may not Create ${missing.length > 1 ? 'them' : 'it'}; create ${missing.length > 1 ? 'them' : 'it'} (docs/kafka-security.md, Topic settings): ${create}; or grant Create: ${grants} (${detail}; creating topics)`,
    { cause, retryable: false },
  );
}

/** Reads every topic's replicas, and the settings of those ferry may describe (not the control topic). */
export async function checkTopicSettings(
  admin: Admin,
  context: TopicProbeContext,
): Promise<TopicSettingsFound> {
  const { steps } = context;
  const maxMessageBytesOf = new Map<string, number>();
  const checked = context.needs.filter((need) => need.describeConfigs);
  const metadata = await steps.run('describing the topics', () =>
    admin.fetchTopicMetadata({ topics: checked.map((need) => need.topic) }),
  );
  const actual = [];
  for (const need of checked) {
    const { topic } = need;
    // One topic a request: a refusal must name its topic, and Kafka's answer to a
    // request for several names none.
    const described = await steps.run(
      `describing the settings of topic ${topic}`,
      () =>
        admin.describeConfigs({
          includeSynonyms: false,
          resources: [
            {
              type: kafkajs.ConfigResourceTypes.TOPIC,
              name: topic,
              configNames: ['min.insync.replicas', 'max.message.bytes'],
            },
          ],
        }),
      { resource: 'Topic', name: topic, pattern: 'literal', operations: ['DescribeConfigs'] },
    );
    const partitions = metadata.topics.find((t) => t.name === topic)?.partitions ?? [];
    const entries = described.resources[0]?.configEntries ?? [];
    const setting = (name: string) => {
      const value = entries.find((e) => e.configName === name)?.configValue;
      return value === undefined ? undefined : Number(value);
    };
    const maxMessageBytes = setting('max.message.bytes');
    if (maxMessageBytes !== undefined) maxMessageBytesOf.set(topic, maxMessageBytes);
    actual.push({
      topic,
      replicas: Math.min(...partitions.map((p) => p.replicas.length)),
      minInsyncReplicas: setting('min.insync.replicas') ?? 1,
      ...(maxMessageBytes !== undefined ? { maxMessageBytes } : {}),
      writtenByFerry: need.writtenByFerry,
    });
  }
  const warnings = judgeTopicSettings(actual, context.topicSettings, context.recordMaxBytes);
  for (const warning of warnings) {
    context.log.warn(
      warning,
      `topic ${warning.topic} has ${warning.setting}=${warning.actual}, below the configured ${warning.expected}: fewer broker failures are survived than intended`,
    );
  }
  return { warnings, maxMessageBytes: maxMessageBytesOf };
}
