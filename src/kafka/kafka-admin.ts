/**
 * The admin requests ferry makes while it runs (kafka-client.ts hands them over): creating
 * missing topics, asking whether the group is stable with a member in it, pinging the
 * cluster, reading committed offsets, end offsets and the group's lag, and the partition
 * count a producer picks partitions by, remembered for a minute. All of them share one
 * admin connection, opened on first use and opened again after it failed. Each failure
 * is counted by kind, for metrics, and thrown as a FerryError `kafka`.
 */
import { whileCoordinatorMoves } from './coordinator-errors.ts';
import type { LogBounds } from './kafka-port.ts';
import { kafkaError } from './kafka-security.ts';
import type { Admin, Kafka, KafkaConfig } from './kafkajs.ts';
import type { PartitionOffset, TopicSpec } from './records.ts';
import { StableOffsetReader } from './stable-offsets.ts';
import { retryWhilePassing } from './start-retry.ts';
import { createTopicsAndWait } from './topic-leaders.ts';

/** How long a topic's partition count is trusted before it is read again. */
const PARTITION_COUNT_TTL_MS = 60_000;

export class KafkaAdmin {
  readonly #kafka: Kafka;
  /** What the client was built from, for the wait for new topics that asks every broker. */
  readonly #config: KafkaConfig;
  /** Counts a failed admin request by kind. */
  readonly #onError: (kind: string) => void;
  /** A promise, so concurrent first calls share one connection. */
  #admin: Promise<Admin> | undefined;
  /** Offsets read with require_stable, which kafkajs's admin cannot ask for. */
  readonly #stable: StableOffsetReader;
  readonly #partitionCounts = new Map<string, { count: number; at: number }>();

  constructor(kafka: Kafka, config: KafkaConfig, onError: (kind: string) => void) {
    this.#kafka = kafka;
    this.#config = config;
    this.#onError = onError;
    this.#stable = new StableOffsetReader(kafka);
  }

  #adminClient(): Promise<Admin> {
    if (!this.#admin) {
      const admin = this.#kafka.admin();
      const connected = admin.connect().then(() => admin);
      connected.catch(() => {
        if (this.#admin === connected) this.#admin = undefined;
      });
      this.#admin = connected;
    }
    return this.#admin;
  }

  /**
   * How many partitions `topic` has, from the metadata, remembered for a minute: a
   * producer picks partitions itself (acknowledged-send.ts), and a topic whose
   * partitions were added is seen within that minute. @throws FerryError `kafka`.
   */
  async partitionCount(topic: string): Promise<number> {
    const cached = this.#partitionCounts.get(topic);
    if (cached && Date.now() - cached.at < PARTITION_COUNT_TTL_MS) return cached.count;
    try {
      const admin = await this.#adminClient();
      const { topics } = await admin.fetchTopicMetadata({ topics: [topic] });
      const count = topics[0]?.partitions.length ?? 0;
      if (count === 0) throw new Error(`no partitions of ${topic} in the metadata`);
      this.#partitionCounts.set(topic, { count, at: Date.now() });
      return count;
    } catch (error: unknown) {
      this.#onError('fetch_metadata');
      throw kafkaError(error, `reading the partitions of ${topic} failed`);
    }
  }

  /** Creates the topics that are missing; existing ones are left as they are. @throws FerryError `kafka`. */
  async ensureTopics(specs: readonly TopicSpec[]): Promise<void> {
    try {
      const admin = await this.#adminClient();
      const existing = new Set(await admin.listTopics());
      const missing = specs.filter((s) => !existing.has(s.topic));
      if (missing.length === 0) return;
      // kafkajs's own waitForLeaders asks one broker, and gives up when that broker has
      // not yet heard of the new topic (UNKNOWN_TOPIC_OR_PARTITION on a cluster): the wait
      // below asks every broker, again until each shows a leader for every partition.
      await createTopicsAndWait(
        admin,
        this.#config,
        missing.map((s) => ({
          topic: s.topic,
          numPartitions: s.partitions,
          replicationFactor: s.replicationFactor,
          configEntries: Object.entries(s.config ?? {}).map(([name, value]) => ({ name, value })),
        })),
      );
    } catch (error: unknown) {
      this.#onError('create_topics');
      // Another replica may have created them between list and create.
      if (error instanceof Error && /already exists/i.test(error.message)) return;
      throw kafkaError(error, 'creating topics failed');
    }
  }

  /**
   * Whether the group is stable with this member in it: then the partitions of the
   * member's last join are still its own, and fencing their producers is safe.
   * @throws FerryError `kafka` when the coordinator cannot be asked.
   */
  async isStableMember(groupId: string, memberId: string | undefined): Promise<boolean> {
    if (memberId === undefined) return false;
    try {
      const admin = await this.#adminClient();
      const { groups } = await admin.describeGroups([groupId]);
      const group = groups.find((g) => g.groupId === groupId);
      return group?.state === 'Stable' && group.members.some((m) => m.memberId === memberId);
    } catch (error: unknown) {
      this.#onError('describe_group');
      throw kafkaError(error, 'describing the consumer group failed');
    }
  }

  /** True when the cluster answers a metadata request. */
  async ping(): Promise<boolean> {
    try {
      const admin = await this.#adminClient();
      await admin.describeCluster();
      return true;
    } catch {
      return false;
    }
  }

  /**
   * The group's committed offsets for a topic, by partition (offset -1 when none),
   * with the metadata stored beside each. @throws FerryError `kafka`.
   */
  async committedOffsets(groupId: string, topic: string): Promise<Map<number, PartitionOffset>> {
    try {
      const admin = await this.#adminClient();
      // kafkajs gives up on a coordinator that just moved or still loads the group.
      const answer = await whileCoordinatorMoves(() =>
        admin.fetchOffsets({ groupId, topics: [topic] }),
      );
      // kafkajs asks for the partitions its cluster metadata lists. A metadata refresh for
      // another topic running at the same moment (the dedupe topic read at a takeover) can
      // leave this topic out of it for a while: kafkajs then asks for no partition and
      // answers "no offsets", which a takeover would read as a group that never committed.
      const partitions = answer.find((a) => a.topic === topic)?.partitions ?? [];
      if (partitions.length === 0) {
        throw new Error(`the offsets of ${topic} came back without its partitions`);
      }
      const result = new Map<number, PartitionOffset>();
      for (const p of partitions) {
        result.set(p.partition, {
          topic,
          partition: p.partition,
          offset: p.offset,
          metadata: p.metadata,
        });
      }
      return result;
    } catch (error: unknown) {
      this.#onError('fetch_offsets');
      throw kafkaError(error, 'reading committed offsets failed');
    }
  }

  /** The end offset (high watermark) of each partition of a topic. */
  async endOffsets(topic: string): Promise<Map<number, string>> {
    const admin = await this.#adminClient();
    // Right after a topic is created, or while a leader moves, the broker kafkajs asks may
    // not lead the partition yet (NOT_LEADER_FOR_PARTITION), and kafkajs's admin gives up
    // without refreshing its metadata: asked again for a few seconds.
    const offsets = await retryWhilePassing(() => admin.fetchTopicOffsets(topic), {
      deadlineMs: 10_000,
    });
    return new Map(offsets.map((o) => [o.partition, o.high]));
  }

  /** Where each partition's log starts and ends (see KafkaPort.logBounds). */
  async logBounds(topic: string): Promise<Map<number, LogBounds>> {
    const admin = await this.#adminClient();
    const offsets = await retryWhilePassing(() => admin.fetchTopicOffsets(topic), {
      deadlineMs: 10_000,
    });
    return new Map(offsets.map((o) => [o.partition, { start: o.low, end: o.high }]));
  }

  /**
   * Records of each partition of `topic` the group has not committed yet (end offset
   * minus committed offset; a partition without a commit counts from 0).
   * @throws FerryError `kafka`.
   */
  async groupLag(groupId: string, topic: string): Promise<Map<number, number>> {
    try {
      const [ends, committed] = await Promise.all([
        this.endOffsets(topic),
        this.committedOffsets(groupId, topic),
      ]);
      const lag = new Map<number, number>();
      for (const [partition, end] of ends) {
        const from = Math.max(0, Number(committed.get(partition)?.offset ?? 0));
        lag.set(partition, Math.max(0, Number(end) - from));
      }
      return lag;
    } catch (error: unknown) {
      throw kafkaError(error, 'reading the consumer group lag failed');
    }
  }

  /**
   * The committed offsets of `partitions` once no open transaction holds one of them
   * (stable-offsets.ts). A cluster older than Kafka 2.5 cannot be asked that: its offsets
   * are read as they are, as before (only transactions of the partition's own id, which
   * a takeover ends by initialising it, can hold them there: lane transactions need 2.5).
   * @throws FerryError `kafka` when one is still held after `waitMs`.
   */
  async stableOffsets(
    groupId: string,
    topic: string,
    partitions: readonly number[],
    waitMs: number,
  ): Promise<Map<number, PartitionOffset>> {
    let stable: Map<number, PartitionOffset> | undefined;
    try {
      stable = await this.#stable.read(groupId, topic, partitions, waitMs);
    } catch (error: unknown) {
      this.#onError('fetch_stable_offsets');
      throw error;
    }
    if (stable) return stable;
    const all = await this.committedOffsets(groupId, topic);
    return new Map(
      partitions.flatMap((p) => (all.has(p) ? [[p, all.get(p) as PartitionOffset]] : [])),
    );
  }

  /** Closes the admin connection and the stable reads' one, if they were opened. */
  async close(): Promise<void> {
    await this.#stable.close();
    const admin = this.#admin;
    this.#admin = undefined;
    await admin?.then((a) => a.disconnect()).catch(() => undefined);
  }
}
