/**
 * The start-up check of ferry's access to Kafka: before anything consumes or produces,
 * every permission ferry will need is exercised once, so a wrong password, an unknown CA
 * or a missing ACL stops the start with one error naming it instead of failing later in
 * the middle of a batch (or, for the dead-letter replay, days later).
 *
 * Each refusal names the resource, the operation and the `kafka-acls.sh` line that grants
 * it (acl-grants.ts). What each probe exercises (docs/kafka-security.md has the ACL table):
 * - connecting: TLS and SASL;
 * - listing, creating (only when missing) and describing the topics: Topic DESCRIBE
 *   (CREATE only for topics that do not exist yet), Topic DESCRIBE_CONFIGS; a topic the
 *   listing hides is asked for alone, which tells a missing topic from a missing grant;
 * - the committed offsets of ferry's group and of the replay's progress group: Group
 *   DESCRIBE, which READ implies;
 * - offsets committed outside any membership for a throwaway replay reader group (the
 *   commands and dead-letter topics) and a throwaway control-topic follower group (the
 *   control topic), each deleted: Group READ and DELETE on both prefixes, Topic READ;
 * - aborted transactions under `${clientId}-`, each adding one topic ferry writes
 *   transactionally: TransactionalId WRITE, Topic WRITE. The aborted probe records are
 *   never visible at read_committed, which is how every reader of these topics must read;
 * - initialising a transactional id under the replay's prefix: TransactionalId WRITE.
 */
import { randomUUID } from 'node:crypto';
import type { KafkaSecurity } from '../config/kafka-security.ts';
import { FerryError } from '../errors.ts';
import type { Logger } from '../observability/logger.ts';
import {
  type NeedOf,
  probeReading,
  probeTopicWrites,
  probeTransactionalIds,
  type Step,
} from './access-probes.ts';
import { type AclNeed, aclCommand, missingAcl, principalOf } from './acl-grants.ts';
import { kafkaConnection, kafkaError, kafkaRefusalOf } from './kafka-security.ts';
import kafkajs, {
  type Admin,
  Kafka,
  type KafkaConfig,
  type LogEntry,
  logLevel,
} from './kafkajs.ts';
import { boundedRetry } from './retry-budget.ts';
import { createTopicsAndWait } from './topic-leaders.ts';
import {
  createTopicCommand,
  describeGrant,
  type FerryTopics,
  type TopicNeed,
  topicNeeds,
} from './topic-needs.ts';
import {
  type ExpectedTopicSettings,
  judgeTopicSettings,
  type TopicSettingWarning,
} from './topic-settings.ts';

export interface KafkaAccessOptions {
  readonly brokers: readonly string[];
  readonly clientId: string;
  readonly security?: KafkaSecurity;
  readonly logger: Logger;
  readonly topics: FerryTopics;
  /** Settings of topics ferry creates, and what existing ones are checked against. */
  readonly topicSettings: ExpectedTopicSettings;
  /** The largest record ferry writes (FERRY_RECORD_MAX_BYTES). */
  readonly recordMaxBytes: number;
  readonly groupId: string;
  /** The replay's progress group; its reader groups and transactional id share it as a prefix. */
  readonly replayGroupId: string;
  /** How long to keep trying brokers that do not answer at all. Default 60 000 ms. */
  readonly connectTimeoutMs?: number;
}

/** How long one try of a probe may take. */
const PROBE_TIMEOUT_MS = 30_000;
/**
 * How long a probe is tried again while Kafka answers with passing errors or a try
 * times out: a node of a cluster killed during start-up takes its partitions and
 * coordinators along until the cluster has moved them (tens of seconds).
 */
const STEP_DEADLINE_MS = 90_000;

/** A probe's try that ran out of time: tried again while the step's deadline allows. */
class ProbeTimeout extends FerryError {}

interface CoordinatorRefusal {
  readonly type: string;
  readonly message: string;
}

function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new ProbeTimeout('kafka', `${what} timed out after ${ms} ms`)),
      ms,
    );
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

export class KafkaAccessCheck {
  readonly #options: KafkaAccessOptions;
  readonly #kafka: Kafka;
  readonly #log: Logger;
  /** `max.message.bytes` of each topic as the cluster described it (for the write probe). */
  readonly #topicMaxMessageBytes = new Map<string, number>();
  /** Brokers, client id, TLS and SASL: what a per-broker probe client needs too. */
  readonly #connection: KafkaConfig;
  /**
   * What the last FindCoordinator refused, if it did. kafkajs drops that error and throws
   * "Failed to find group coordinator" instead; it only shows in its debug log, which is
   * where this is taken from. Reset before each probe.
   */
  #coordinatorRefusal: CoordinatorRefusal | undefined;
  /** Who the grants in refusal lines are for. */
  readonly #principal: string;
  readonly #needs: readonly TopicNeed[];

  constructor(options: KafkaAccessOptions) {
    this.#options = options;
    this.#principal = principalOf(options.security);
    this.#needs = topicNeeds(options.topics, options.topicSettings);
    this.#log = options.logger.child({ component: 'kafka-access' });
    // Nothing is logged from here: every failure of a probe is reported once, classified,
    // by ferry itself. The debug level only lets the coordinator refusals through.
    this.#connection = kafkaConnection(options);
    this.#kafka = new Kafka({
      ...this.#connection,
      logLevel: logLevel.DEBUG,
      logCreator: () => (entry) => this.#noteCoordinatorRefusal(entry),
      // Each step's patience as before (about 19 s), each wait capped (retry-budget.ts).
      retry: boundedRetry(300, 2, 19_000),
    });
  }

  #noteCoordinatorRefusal(entry: LogEntry): void {
    if (entry.log.message !== 'Tried to find group coordinator') return;
    const error = (entry.log as { error?: { type?: unknown; message?: unknown } }).error;
    if (typeof error?.type === 'string' && /AUTHORIZATION_FAILED$/.test(error.type)) {
      this.#coordinatorRefusal = { type: error.type, message: String(error.message) };
    }
  }

  /**
   * Runs every probe; creates the topics that are missing. @returns the topic settings
   * that differ from the expected ones (also logged as warnings).
   * @throws FerryError `kafka_authentication`, `kafka_tls`, `kafka_authorization`,
   * `kafka_topic_settings`, or `kafka` when the cluster cannot be reached.
   */
  async run(): Promise<TopicSettingWarning[]> {
    const admin = await this.#connect();
    try {
      await this.#step('connecting to Kafka', () => admin.connect());
      await this.#ensureTopics(admin);
      const warnings = await this.#checkTopicSettings(admin);
      const { topics, groupId, clientId, replayGroupId } = this.#options;
      await this.#step(
        `reading the offsets of the consumer group ${groupId}`,
        () => admin.fetchOffsets({ groupId, topics: [topics.commands] }),
        groupRead(groupId, 'literal'),
      );
      await this.#step(
        `reading the dead-letter replay progress (group ${replayGroupId})`,
        () => admin.fetchOffsets({ groupId: replayGroupId, topics: [topics.dlq] }),
        groupRead(replayGroupId, 'prefixed'),
      );
      const step: Step = (what, action, need) => this.#step(what, action, need);
      await probeReading(this.#kafka, admin, step, {
        groupId: `${replayGroupId}.reader.preflight-${randomUUID()}`,
        topics: [topics.commands, topics.dlq],
        groupNeed: groupRead(replayGroupId, 'prefixed'),
        groupDeleteNeed: groupDelete(replayGroupId),
        what: 'the dead-letter replay reader group',
      });
      // The control-topic follower: its group reads the control topic (joined after the
      // start, so a refusal must show here) and is deleted when it stops.
      await probeReading(this.#kafka, admin, step, {
        groupId: `${groupId}.control.preflight-${randomUUID()}`,
        topics: [topics.control],
        groupNeed: groupRead(`${groupId}.control`, 'prefixed'),
        groupDeleteNeed: groupDelete(`${groupId}.control`),
        what: 'a control-topic follower group',
      });
      // Unique per start: replicas starting together must not fence each other's probe.
      await probeTransactionalIds(this.#kafka, step, [
        {
          id: `${clientId}-${groupId}-preflight-${randomUUID()}`,
          what: 'a transactional id of the command partitions',
          need: transactionalWrite(`${clientId}-`),
        },
        {
          id: `${replayGroupId}.preflight-${randomUUID()}`,
          what: 'the dead-letter replay transactional id',
          need: transactionalWrite(replayGroupId),
        },
      ]);
      await probeTopicWrites(
        this.#kafka,
        step,
        [topics.results, topics.dlq, topics.commands].map((topic) => ({
          topic,
          ...this.#maxMessageBytes(topic),
        })),
      );
      return warnings;
    } finally {
      await admin.disconnect().catch(() => undefined);
    }
  }

  /**
   * Runs one probe, again while Kafka answers with a passing error (a coordinator still
   * loading on a fresh cluster answers NOT_COORDINATOR for a while); a refusal ends it.
   */
  async #step<T>(
    what: string,
    action: () => Promise<T>,
    need?: NeedOf,
    { timeAttempts = true }: { timeAttempts?: boolean } = {},
  ): Promise<T> {
    const deadline = Date.now() + STEP_DEADLINE_MS;
    for (let attempt = 1; ; attempt++) {
      this.#coordinatorRefusal = undefined;
      try {
        return await (timeAttempts ? withTimeout(action(), PROBE_TIMEOUT_MS, what) : action());
      } catch (error: unknown) {
        // Set by the log hook while the probe ran, which TypeScript cannot see.
        const refusal = this.#coordinatorRefusal as CoordinatorRefusal | undefined;
        if (refusal && error instanceof Error && error.name === 'KafkaJSGroupCoordinatorNotFound') {
          const cause = Object.assign(new Error(refusal.message), { type: refusal.type });
          throw this.#refusal(cause, `${what}: finding the coordinator`, need);
        }
        const failure = this.#refusal(error, what, need);
        const passing = error instanceof ProbeTimeout || isRetriable(error);
        if (failure.code !== 'kafka' || !passing || Date.now() > deadline) throw failure;
        this.#log.info(
          { attempt, err: failure.message },
          'Kafka is not ready for this yet; retrying',
        );
        await new Promise((resolve) => setTimeout(resolve, Math.min(2_000, 200 * attempt)));
      }
    }
  }

  /**
   * `error` as a FerryError; a missing ACL with the grant `need` names for the refused
   * resource type, when it names one.
   */
  #refusal(error: unknown, what: string, need: NeedOf | undefined): FerryError {
    const found = kafkaRefusalOf(error);
    if (need && found?.refusal === 'kafka_authorization') {
      const granted = typeof need === 'function' ? need(found.detail) : need;
      // A static need only answers for a refusal of its own resource type.
      if (granted && found.detail.startsWith(REFUSAL_PREFIX[granted.resource])) {
        const message = error instanceof Error ? error.message : String(error);
        return missingAcl(granted, this.#principal, `${found.detail}; ${what}: ${message}`, error);
      }
    }
    return kafkaError(error, what);
  }

  /** Connects, retrying brokers that do not answer; a refusal ends it at once. */
  async #connect(): Promise<Admin> {
    const deadline = Date.now() + (this.#options.connectTimeoutMs ?? 60_000);
    const { brokers } = this.#options;
    for (let attempt = 1; ; attempt++) {
      // This loop retries; kafkajs's own retries would only delay a refusal. kafkajs tries
      // the first broker of the list first, so each try begins with the next broker: a
      // node that is down must not hold up start-up while the others answer.
      const first = (attempt - 1) % brokers.length;
      const admin = new Kafka({
        ...this.#connection,
        brokers: [...brokers.slice(first), ...brokers.slice(0, first)],
        logLevel: logLevel.NOTHING,
        retry: { retries: 0 },
      }).admin();
      try {
        await admin.connect();
        await admin.describeCluster();
        await admin.disconnect();
        return this.#kafka.admin();
      } catch (error: unknown) {
        await admin.disconnect().catch(() => undefined);
        const failure = kafkaError(error, 'connecting to Kafka');
        if (failure.code !== 'kafka' || Date.now() > deadline) throw failure;
        this.#log.warn({ attempt, err: failure.message }, 'Kafka does not answer yet; retrying');
        await new Promise((resolve) => setTimeout(resolve, Math.min(5_000, 500 * attempt)));
      }
    }
  }

  /**
   * Creates the topics that are missing. A broker that dies meanwhile (a rolling restart)
   * is a passing error: listing and creating are tried again until the probe's deadline.
   * A try is not cut short: its own wait for the new leaders lasts up to 30 s.
   */
  async #ensureTopics(admin: Admin): Promise<void> {
    await this.#step(
      'creating the missing topics',
      () => this.#createMissingTopics(admin),
      undefined,
      { timeAttempts: false },
    );
  }

  async #createMissingTopics(admin: Admin): Promise<void> {
    const visible = new Set(await this.#step('listing topics', () => admin.listTopics()));
    const missing: TopicNeed[] = [];
    for (const need of this.#needs.filter((n) => !visible.has(n.topic))) {
      if (await this.#hidden(admin, need)) {
        throw missingAcl(
          describeGrant(need),
          this.#principal,
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
        this.#connection,
        missing.map((need) => ({
          topic: need.topic,
          numPartitions: need.partitions,
          replicationFactor: this.#options.topicSettings.replicationFactor,
          configEntries: Object.entries(need.config).map(([name, value]) => ({ name, value })),
        })),
      );
      this.#log.info({ topics: missing.map((n) => n.topic) }, 'created the missing topics');
    } catch (error: unknown) {
      // Another replica, or an earlier try whose answer was lost, created them meanwhile.
      if (error instanceof Error && /already exists/i.test(error.message)) return;
      const refused = kafkaRefusalOf(error);
      if (refused?.refusal !== 'kafka_authorization') throw kafkaError(error, 'creating topics');
      throw this.#cannotCreate(missing, refused.detail, error);
    }
  }

  /**
   * Whether Kafka refuses to say anything about the topic (no Describe) rather than
   * answering that it does not exist; the admin client never creates it by asking.
   */
  async #hidden(admin: Admin, need: TopicNeed): Promise<boolean> {
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
  #cannotCreate(missing: readonly TopicNeed[], detail: string, cause: unknown): FerryError {
    const { replicationFactor } = this.#options.topicSettings;
    const create = missing.map((need) => createTopicCommand(need, replicationFactor)).join('; ');
    const grants = missing
      .map((need) =>
        aclCommand(
          { resource: 'Topic', name: need.topic, pattern: 'literal', operations: ['Create'] },
          this.#principal,
        ),
      )
      .join('; ');
    return new FerryError(
      'kafka_authorization',
      `Kafka denied an operation ferry needs: an ACL is missing: topic${missing.length > 1 ? 's' : ''} ${missing.map((n) => n.topic).join(', ')} do${missing.length > 1 ? '' : 'es'} not exist and ${this.#principal} may not Create ${missing.length > 1 ? 'them' : 'it'}; create ${missing.length > 1 ? 'them' : 'it'} (docs/kafka-security.md, Topic settings): ${create}; or grant Create: ${grants} (${detail}; creating topics)`,
      { cause, retryable: false },
    );
  }

  #maxMessageBytes(topic: string): { maxMessageBytes?: number } {
    const bytes = this.#topicMaxMessageBytes.get(topic);
    return bytes === undefined ? {} : { maxMessageBytes: bytes };
  }

  /** Reads every topic's replicas, and the settings of those ferry may describe (not the control topic). */
  async #checkTopicSettings(admin: Admin): Promise<TopicSettingWarning[]> {
    const checked = this.#needs.filter((need) => need.describeConfigs);
    const metadata = await this.#step('describing the topics', () =>
      admin.fetchTopicMetadata({ topics: checked.map((need) => need.topic) }),
    );
    const actual = [];
    for (const need of checked) {
      const { topic } = need;
      // One topic a request: a refusal must name its topic, and Kafka's answer to a
      // request for several names none.
      const described = await this.#step(
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
      if (maxMessageBytes !== undefined) this.#topicMaxMessageBytes.set(topic, maxMessageBytes);
      actual.push({
        topic,
        replicas: Math.min(...partitions.map((p) => p.replicas.length)),
        minInsyncReplicas: setting('min.insync.replicas') ?? 1,
        ...(maxMessageBytes !== undefined ? { maxMessageBytes } : {}),
        writtenByFerry: need.writtenByFerry,
      });
    }
    const warnings = judgeTopicSettings(
      actual,
      this.#options.topicSettings,
      this.#options.recordMaxBytes,
    );
    for (const warning of warnings) {
      this.#log.warn(
        warning,
        `topic ${warning.topic} has ${warning.setting}=${warning.actual}, below the configured ${warning.expected}: fewer broker failures are survived than intended`,
      );
    }
    return warnings;
  }
}

/** How Kafka's refusal codes begin for each resource type. */
const REFUSAL_PREFIX: Record<AclNeed['resource'], string> = {
  Topic: 'TOPIC_',
  Group: 'GROUP_',
  TransactionalId: 'TRANSACTIONAL_ID_',
};

function groupRead(name: string, pattern: AclNeed['pattern']): AclNeed {
  return { resource: 'Group', name, pattern, operations: ['Read'] };
}

function groupDelete(prefix: string): AclNeed {
  return { resource: 'Group', name: prefix, pattern: 'prefixed', operations: ['Delete'] };
}

function transactionalWrite(prefix: string): AclNeed {
  return { resource: 'TransactionalId', name: prefix, pattern: 'prefixed', operations: ['Write'] };
}

/** Whether kafkajs marks the error, or one it wraps, as passing. */
function isRetriable(error: unknown, depth = 0): boolean {
  if (typeof error !== 'object' || error === null || depth > 5) return false;
  const record = error as { retriable?: unknown; cause?: unknown; originalError?: unknown };
  if (record.retriable === true) return true;
  return isRetriable(record.cause, depth + 1) || isRetriable(record.originalError, depth + 1);
}
