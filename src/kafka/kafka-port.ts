/**
 * The Kafka port: everything the pipeline may ask of Kafka, in ferry's own terms and
 * nothing of any client library. The kafkajs adapter (kafka-client.ts, consumers.ts,
 * producers.ts) implements it, with every kafkajs workaround kept behind it; the
 * simulator of the exactly-once core (test/sim/) implements it in memory, deterministic
 * from a seed. Code above the port imports its types from here only.
 */

/** A record read from a topic. */
export interface InboundRecord {
  readonly topic: string;
  readonly partition: number;
  readonly offset: string;
  readonly key: Buffer | null;
  readonly value: Buffer | null;
  readonly headers: Readonly<Record<string, string>>;
  /** Milliseconds since the epoch, as a string (Kafka record timestamp). */
  readonly timestamp: string;
  /**
   * Set when the record was too long to be kept once decompressed: its sizes. Its value
   * is then null; key and headers are kept when within 64 KiB each.
   */
  readonly oversized?: Oversized;
}

/** The sizes of a record that was too long to keep once decompressed. */
export interface Oversized {
  readonly recordBytes: number;
  /** -1 for a null value. */
  readonly valueBytes: number;
}

/** A record to write. */
export interface OutboundRecord {
  readonly topic: string;
  readonly key: string | Buffer | null;
  readonly value: string | Buffer | null;
  readonly headers?: Readonly<Record<string, string | Buffer>>;
  /**
   * The partition to write to, taken modulo the topic's partition count; without it, the
   * key's murmur2 hash picks it (the Java client's default partitioner).
   */
  readonly partition?: number;
}

/** Where a partition's log starts and ends. */
export interface LogBounds {
  /** The first offset still in the log: where a group without a committed offset begins, reading from the earliest. */
  readonly start: string;
  /** The offset the next record will get (the high watermark). */
  readonly end: string;
}

/** A group's committed offset of one partition. */
export interface PartitionOffset {
  readonly topic: string;
  readonly partition: number;
  /** The next offset to consume (last processed + 1). */
  readonly offset: string;
  /** Stored with the committed offset by the group coordinator; ferry keeps its send intent here. */
  readonly metadata?: string | null;
}

/** Consecutive records of one partition, fetched together and handed over at once. */
export interface RecordBatch {
  readonly topic: string;
  readonly partition: number;
  readonly records: readonly InboundRecord[];
  /**
   * The offset the fetch asked for (default: the first record's). Above the first record
   * when the fetch began on a transaction marker or a record compacted away.
   */
  readonly fetchedFrom?: string;
  /**
   * Where the partition's next fetch begins: past the last record and any transaction
   * markers the fetch returned after it (default: the last record's offset + 1).
   */
  readonly nextOffset?: string;
  /** Records behind this batch's last one (high watermark − last offset − 1). */
  readonly lag: number;
  /**
   * The consumer's group membership when the batch was handed over: offsets of this batch
   * committed with it (a transactional producer `fencedBy` it) are refused once the group
   * has moved on. Undefined when none is known (the consumer is joining again).
   */
  readonly membership?: GroupMembership | undefined;
  /**
   * Sends a heartbeat when the last one is older than the consumer's heartbeat interval.
   * Resolves `rebalancing` when the coordinator answered that the group is rebalancing:
   * the member still belongs to it and will rejoin (the consumer announces it then, see
   * BatchConsumerOptions.onRebalancing). Rejects when the heartbeat failed otherwise.
   */
  heartbeat(): Promise<'ok' | 'rebalancing'>;
  /** False once the consumer is stopping or a rewind of the partition is pending. */
  isCurrent(): boolean;
  /**
   * Fetches the partition again from `offset` (default: this batch's first record).
   * Batches of the partition handed over before the call come again after it, so their
   * handler drops them.
   */
  rewind(offset?: string): void;
}

export interface BatchConsumerOptions {
  readonly groupId: string;
  readonly topic: string;
  /** Batches of different partitions handled at once. Default 16. */
  readonly partitionsConsumedConcurrently?: number;
  /** Bytes fetched per partition per request; bounds memory per batch. Default 1 MiB. */
  readonly maxBytesPerPartition?: number;
  /** Bytes of one fetch response over all partitions. Default 4 MiB. */
  readonly maxBytes?: number;
  /**
   * Records whose value is longer than this once decompressed are never held whole:
   * they are handed over with a null value and `oversized` set. Default 1 MiB.
   */
  readonly recordMaxBytes?: number;
  /**
   * Decompressed bytes of records one fetch response may hand over; a response with
   * more is cut there and the rest fetched again. Default 8 MiB.
   */
  readonly maxDecompressedBytes?: number;
  readonly sessionTimeoutMs?: number;
  /**
   * How often the member heartbeats. Default: a tenth of the session timeout, at most
   * 1 s (how soon a member learns of a rebalance) and at least 100 ms, so that a
   * heartbeat throttled by kafkajs (it skips one sent
   * sooner than this after the previous) still arrives well within the session.
   */
  readonly heartbeatIntervalMs?: number;
  /**
   * Longest wait of a fetch for new records. kafkajs also sleeps this long when every
   * partition is paused, so it bounds how soon fetching restarts after a pause. Default 250.
   */
  readonly fetchMaxWaitMs?: number;
  /**
   * Takes a fetched batch. The consumer does not wait for it: the next fetch goes out at
   * once, so fetching never waits behind the handling of earlier batches. The handler
   * owns ordering (one batch of a partition at a time), backpressure (`pause`) and
   * retries (`rewind`); nothing is committed to the group but what it commits itself.
   */
  readonly onBatch: (batch: RecordBatch) => void;
  /**
   * The member is about to join again: partitions may be taken away. `announced`: the
   * coordinator answered that the group is rebalancing (REBALANCE_IN_PROGRESS) and
   * `beforeRejoin` runs before the rejoin, so until then the partitions are still this
   * member's. Not announced: the member's generation moved on, its coordinator moved or
   * is gone; its partitions may be another's already.
   */
  readonly onRebalancing?: (how: { readonly announced: boolean }) => void;
  /**
   * Runs before this member rejoins a rebalancing group, while the group waits for it
   * (the place of the Java consumer's `onPartitionsRevoked`): what is in flight can
   * settle before the partitions move. Bounded by the caller; not run at the first join,
   * nor after the member was expelled.
   */
  readonly beforeRejoin?: () => Promise<void>;
  /** The partitions of the topic this member owns, after each rebalance. */
  readonly onAssignment?: (partitions: readonly number[]) => void;
  /** The consumer stopped for good (the client gave up restarting it). */
  readonly onCrash?: (error: Error) => void;
  /** Told when joining failed with a passing error and is tried again (for a warning). */
  readonly onStartRetry?: (attempt: number, error: unknown) => void;
}

/** A member's place in its consumer group, as the coordinator gave it at its last join. */
export interface GroupMembership {
  readonly generationId: number;
  readonly memberId: string;
  /** Static membership's instance id; null without. */
  readonly groupInstanceId: string | null;
}

/** Where a producer's commits find the membership their offsets carry: asked at each commit. */
export type MembershipSource = () => GroupMembership | undefined;

/** How a transactional producer's offsets are fenced besides its transactional id's epoch. */
export interface TransactionalOptions {
  /**
   * Offsets committed with this membership (TxnOffsetCommit v3): the group coordinator
   * refuses them once the group has moved on from its member or generation, and the
   * transaction fails whole. It does not check which partitions the member owns.
   */
  readonly fencedBy?: MembershipSource;
  /**
   * How long the broker lets a transaction of this producer stay open before it aborts it
   * (and fences the producer), ms. Default 60000.
   */
  readonly transactionTimeoutMs?: number;
}

/** A consumer group member that hands whole fetched batches to one handler. */
export interface GroupConsumer {
  /** How often the member heartbeats, ms. */
  readonly heartbeatIntervalMs: number;
  /**
   * When the group coordinator last confirmed this member (a heartbeat or a join was
   * sent), ms since the epoch; 0 before the first join.
   */
  readonly confirmedAt: number;
  /** This member's id in the group, from its last join. */
  readonly memberId: string | undefined;
  /**
   * The generation and member id of this member's last completed join; undefined before
   * it, while the member joins again and once it left the group.
   */
  readonly membership: GroupMembership | undefined;
  readonly assignedPartitions: readonly number[];
  readonly running: boolean;
  /** Whether fetching is paused now (the client's own view). */
  readonly paused: boolean;
  /** Joins the group and starts fetching; `paused`: not even a first batch is fetched. */
  start(options?: { paused?: boolean }): Promise<void>;
  /** Stops fetching new batches; batches handed over are the handler's. */
  pause(): void;
  resume(): void;
  /** Leaves the group. */
  stop(): Promise<void>;
}

/**
 * One transactional id's producer. `connect` initialises the id, which fences any
 * earlier holder and completes or aborts its open transaction.
 */
export interface PartitionProducer {
  connect(): Promise<void>;
  /**
   * Commits `records` and the group's `offsets` in one transaction.
   * @throws when it did not commit, or its outcome is unknown (the text tells a fencing).
   */
  commit(
    records: readonly OutboundRecord[],
    groupId: string,
    offsets: readonly PartitionOffset[],
  ): Promise<void>;
  disconnect(): Promise<void>;
}

/** A record as a topic keeps it: what reading a partition whole hands over. */
export interface StoredRecord {
  readonly offset: string;
  readonly key: Buffer | null;
  readonly value: Buffer | null;
}

/** Reads partitions of one topic onward from where the caller left off, without a group. */
export interface TopicReader {
  /**
   * Every committed record of the partition that records written with `partition` land in,
   * from `from` (or the partition's start, when that is later) up to its last stable offset
   * as of the call, in offset order. @returns the offset to read from next.
   * @throws when it cannot be read now (the caller tries again later).
   */
  readOn(
    partition: number,
    from: string,
    onRecord: (record: StoredRecord) => void,
  ): Promise<string>;
  close(): Promise<void>;
}

/** What the pipeline asks of Kafka. */
export interface KafkaPort {
  createBatchConsumer(options: BatchConsumerOptions): GroupConsumer;
  createTransactionalProducer(
    transactionalId: string,
    options?: TransactionalOptions,
  ): PartitionProducer;
  /** The group's committed offsets of a topic, by partition, with their metadata. */
  committedOffsets(groupId: string, topic: string): Promise<Map<number, PartitionOffset>>;
  /**
   * The group's committed offsets of `partitions` (with their metadata) once no open
   * transaction holds one of them: what a partition's new owner reads when the previous
   * owner committed through a transactional id of its own, whose last transaction may
   * still be open or completing. `-1` where the group never committed.
   * @throws when one is still held after `waitMs` (a frozen owner's transaction holds it
   *   until the broker aborts it at its timeout), or when the coordinator cannot be asked.
   */
  stableOffsets(
    groupId: string,
    topic: string,
    partitions: readonly number[],
    waitMs: number,
  ): Promise<Map<number, PartitionOffset>>;
  /** Where each partition's log starts and ends now. @throws when it cannot be read. */
  logBounds(topic: string): Promise<Map<number, LogBounds>>;
  /** Whether the group is stable with this member in it. @throws when the coordinator cannot be asked. */
  isStableMember(groupId: string, memberId: string | undefined): Promise<boolean>;
  /**
   * Every committed record of the partition that records written with `partition` land
   * in, from its start to its end as of the call, in offset order, without a group.
   * @throws when it cannot be read (the caller tries again later).
   */
  readWhole(
    topic: string,
    partition: number,
    onRecord: (record: StoredRecord) => void,
  ): Promise<void>;
  /** A reader of `topic` that keeps its connections between reads. */
  openTopicReader(topic: string): TopicReader;
}
