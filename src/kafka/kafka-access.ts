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
 * - writing: one record one byte over each written topic's `max.message.bytes`, refused
 *   for its size only after the broker checked Topic WRITE, so nothing is written
 *   (access-probes.ts);
 * - initialising a transactional id under `${clientId}-` and one under the replay's
 *   prefix, without a transaction: TransactionalId WRITE.
 *
 * This module connects and runs the probes in order; access-steps.ts tries each probe
 * and classifies its failure, access-topics.ts creates and describes the topics, and
 * access-probes.ts holds the probes that take more than one call.
 */

import { randomUUID } from 'node:crypto';
import type { KafkaSecurity } from '../config/kafka-security.ts';
import type { Logger } from '../observability/logger.ts';
import {
  probeReading,
  probeTopicWrites,
  probeTransactionalIds,
  type Step,
} from './access-probes.ts';
import { AccessSteps } from './access-steps.ts';
import { checkTopicSettings, ensureTopics, type TopicProbeContext } from './access-topics.ts';
import { type AclNeed, principalOf } from './acl-grants.ts';
import { kafkaConnection, kafkaError } from './kafka-security.ts';
import { type Admin, Kafka, type KafkaConfig, logLevel } from './kafkajs.ts';
import { probeRead } from './partition-reader.ts';
import { boundedRetry } from './retry-budget.ts';
import { type FerryTopics, topicNeeds } from './topic-needs.ts';
import type { ExpectedTopicSettings, TopicSettingWarning } from './topic-settings.ts';

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

export class KafkaAccessCheck {
  readonly #options: KafkaAccessOptions;
  readonly #kafka: Kafka;
  readonly #log: Logger;
  /** Brokers, client id, TLS and SASL: what a per-broker probe client needs too. */
  readonly #connection: KafkaConfig;
  /** Runs each probe: its retries, the classification of its failure. */
  readonly #steps: AccessSteps;
  /** What the topic probes work with. */
  readonly #topicContext: TopicProbeContext;

  constructor(options: KafkaAccessOptions) {
    this.#options = options;
    const principal = principalOf(options.security);
    const needs = topicNeeds(options.topics, options.topicSettings);
    this.#log = options.logger.child({ component: 'kafka-access' });
    this.#steps = new AccessSteps(this.#log, principal);
    // Nothing is logged from here: every failure of a probe is reported once, classified,
    // by ferry itself. The debug level only lets the coordinator refusals through.
    this.#connection = kafkaConnection(options);
    this.#kafka = new Kafka({
      ...this.#connection,
      logLevel: logLevel.DEBUG,
      logCreator: () => (entry) => this.#steps.noteCoordinatorRefusal(entry),
      // Each step's patience as before (about 19 s), each wait capped (retry-budget.ts).
      retry: boundedRetry(300, 2, 19_000),
    });
    this.#topicContext = {
      steps: this.#steps,
      log: this.#log,
      principal,
      connection: this.#connection,
      needs,
      topicSettings: options.topicSettings,
      recordMaxBytes: options.recordMaxBytes,
    };
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
      const step: Step = (what, action, need) => this.#steps.run(what, action, need);
      await step('connecting to Kafka', () => admin.connect());
      await ensureTopics(admin, this.#topicContext);
      const { warnings, maxMessageBytes } = await checkTopicSettings(admin, this.#topicContext);
      const { topics, groupId, clientId, replayGroupId } = this.#options;
      await step(
        `reading the offsets of the consumer group ${groupId}`,
        () => admin.fetchOffsets({ groupId, topics: [topics.commands] }),
        groupRead(groupId, 'literal'),
      );
      if (topics.urgent) {
        const urgentGroup = `${groupId}.urgent`;
        await step(
          `reading the offsets of the urgent lane's consumer group ${urgentGroup}`,
          () =>
            admin.fetchOffsets({ groupId: urgentGroup, topics: [topics.urgent?.commands ?? ''] }),
          groupRead(urgentGroup, 'literal'),
        );
      }
      await step(
        `reading the dead-letter replay progress (group ${replayGroupId})`,
        () => admin.fetchOffsets({ groupId: replayGroupId, topics: [topics.dlq] }),
        groupRead(replayGroupId, 'prefixed'),
      );
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
      const dedupeTopics = topics.dedupe
        ? [topics.dedupe.topic, ...(topics.urgent?.dedupe ? [topics.urgent.dedupe] : [])]
        : [];
      const trackingTopics = topics.tracking
        ? [topics.tracking.topic, ...(topics.tracking.urgent ? [topics.tracking.urgent] : [])]
        : [];
      for (const [kind, topic] of [
        ...dedupeTopics.map((t) => ['dedupe', t] as const),
        ...trackingTopics.map((t) => ['tracking', t] as const),
      ]) {
        // Read back at every takeover (and the tracking topics read on), without a group.
        await step(`reading the ${kind} topic ${topic}`, () => probeRead(this.#kafka, topic), {
          resource: 'Topic',
          name: topic,
          pattern: 'literal',
          operations: ['Read'],
        });
      }
      await probeTopicWrites(
        this.#kafka,
        step,
        [
          topics.results,
          topics.dlq,
          topics.commands,
          ...dedupeTopics,
          ...trackingTopics,
          ...(topics.tracking ? [topics.tracking.final] : []),
        ].map((topic) => {
          const bytes = maxMessageBytes.get(topic);
          return { topic, ...(bytes === undefined ? {} : { maxMessageBytes: bytes }) };
        }),
      );
      return warnings;
    } finally {
      await admin.disconnect().catch(() => undefined);
    }
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
}

function groupRead(name: string, pattern: AclNeed['pattern']): AclNeed {
  return { resource: 'Group', name, pattern, operations: ['Read'] };
}

function groupDelete(prefix: string): AclNeed {
  return { resource: 'Group', name: prefix, pattern: 'prefixed', operations: ['Delete'] };
}

function transactionalWrite(prefix: string): AclNeed {
  return { resource: 'TransactionalId', name: prefix, pattern: 'prefixed', operations: ['Write'] };
}
