/** ferry's consumers: the pipeline's batch consumer and a record reader for tools and tests. */
import { DEFAULT_READ_LIMITS, setTopicReadLimits } from './bounded-fetch.ts';
import type { Consumer } from './kafkajs.ts';
import { type InboundRecord, inbound } from './records.ts';

export interface RecordBatch {
  readonly topic: string;
  readonly partition: number;
  readonly records: readonly InboundRecord[];
  /** Records behind this batch's last one (high watermark − last offset − 1). */
  readonly lag: number;
  /** Sends a heartbeat when the last one is older than the consumer's heartbeat interval. */
  heartbeat(): Promise<void>;
  /** False once the consumer is stopping or a rewind of the partition is pending. */
  isCurrent(): boolean;
  /**
   * Fetches the partition again from this batch's first record. Batches of the partition
   * handed over before the call come again after it, so their handler drops them.
   */
  rewind(): void;
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
   * 3 s and at least 100 ms, so that a heartbeat throttled by kafkajs (it skips one sent
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
  /** A rebalance started: partitions may be taken away. */
  readonly onRebalancing?: () => void;
  /** The partitions of the topic this member owns, after each rebalance. */
  readonly onAssignment?: (partitions: readonly number[]) => void;
  /** The consumer stopped for good (kafkajs gave up restarting it). */
  readonly onCrash?: (error: Error) => void;
}

/** Requests whose success confirms the group membership (kafkajs API names). */
const MEMBERSHIP_REQUESTS = new Set(['Heartbeat', 'SyncGroup']);

/** The heartbeat interval a batch consumer uses (see BatchConsumerOptions.heartbeatIntervalMs). */
export function heartbeatIntervalOf(options: BatchConsumerOptions): number {
  if (options.heartbeatIntervalMs !== undefined) return options.heartbeatIntervalMs;
  const session = options.sessionTimeoutMs ?? 30_000;
  return Math.max(100, Math.min(3_000, Math.floor(session / 10)));
}

/** A consumer group member that hands whole fetched batches to one handler, per partition in order. */
export class BatchConsumer {
  readonly #consumer: Consumer;
  readonly #options: BatchConsumerOptions;
  #running = false;
  #assigned: readonly number[] = [];
  #memberId: string | undefined;
  /** When the coordinator last confirmed this membership (a heartbeat or a join), ms. */
  #confirmedAt = 0;

  constructor(consumer: Consumer, options: BatchConsumerOptions) {
    this.#consumer = consumer;
    this.#options = options;
    setTopicReadLimits(options.topic, {
      recordMaxBytes: options.recordMaxBytes ?? 1024 * 1024,
      decompressedMaxBytes:
        options.maxDecompressedBytes ?? DEFAULT_READ_LIMITS.decompressedMaxBytes,
    });
    this.heartbeatIntervalMs = heartbeatIntervalOf(options);
    // The coordinator counts the session from when it received a request, so the time
    // the request was sent, not when its answer was handled, is what the membership is
    // sure of: a process frozen between the two must not take the answer for fresh.
    let lastSentAt = 0;
    consumer.on(consumer.events.REQUEST, (event) => {
      if (MEMBERSHIP_REQUESTS.has(event.payload.apiName)) lastSentAt = event.payload.sentAt;
    });
    consumer.on(consumer.events.HEARTBEAT, () => {
      this.#confirmedAt = lastSentAt;
    });
    consumer.on(consumer.events.GROUP_JOIN, (event) => {
      this.#confirmedAt = lastSentAt;
      this.#memberId = event.payload.memberId;
      this.#assigned = [...(event.payload.memberAssignment[options.topic] ?? [])].sort(
        (a, b) => a - b,
      );
      options.onAssignment?.(this.#assigned);
    });
    consumer.on(consumer.events.CRASH, (event) => {
      if (!event.payload.restart) options.onCrash?.(event.payload.error);
    });
    consumer.on(consumer.events.REBALANCING, () => options.onRebalancing?.());
  }

  readonly heartbeatIntervalMs: number;

  /**
   * When the group coordinator last confirmed this member (its last successful
   * heartbeat or join), in ms since the epoch; 0 before the first join. The member is
   * expelled a session timeout after the last heartbeat the coordinator received, so a
   * sender that checks this against a lease shorter than the session stops before its
   * partitions can have moved to another replica, even after the process was frozen.
   */
  get confirmedAt(): number {
    return this.#confirmedAt;
  }

  /** This member's id in the group, from its last join. */
  get memberId(): string | undefined {
    return this.#memberId;
  }

  get assignedPartitions(): readonly number[] {
    return this.#assigned;
  }

  get running(): boolean {
    return this.#running;
  }

  /**
   * Whether kafkajs holds the topic paused now (its own view, not the caller's): a
   * partition that stopped moving while this is true waits for a resume.
   */
  get paused(): boolean {
    return this.#consumer.paused().length > 0;
  }

  /**
   * Joins the group and starts fetching.
   * @param paused start with fetching paused, so that not even a first batch is fetched.
   */
  async start({ paused = false }: { paused?: boolean } = {}): Promise<void> {
    if (this.#running) return;
    const { topic, onBatch } = this.#options;
    await this.#consumer.connect();
    // A new group starts at the earliest offset: nothing produced before the first start is lost.
    await this.#consumer.subscribe({ topics: [topic], fromBeginning: true });
    const running = this.#consumer.run({
      autoCommit: false,
      eachBatchAutoResolve: false,
      partitionsConsumedConcurrently: this.#options.partitionsConsumedConcurrently ?? 16,
      // kafkajs fetches again only once every batch of the last fetch was handled, so a
      // handler that awaited its transaction here would make each fetch wait for the
      // slowest partition's commit. Batches are handed over and their offsets resolved at
      // once instead; with autoCommit off, kafkajs never commits them to the group (the
      // handler's transactions do), and after a rejoin it fetches from the committed offset.
      eachBatch: async (payload) => {
        const { batch } = payload;
        // A rewind of this partition is pending: its records come again from there.
        if (batch.isEmpty() || payload.isStale()) return;
        const records = batch.messages.map((m) => inbound(batch.topic, batch.partition, m));
        const first = batch.firstOffset() ?? records[0]?.offset;
        payload.resolveOffset(batch.lastOffset());
        onBatch({
          topic: batch.topic,
          partition: batch.partition,
          records,
          lag: Math.max(0, Number(batch.offsetLag())),
          heartbeat: () => payload.heartbeat(),
          isCurrent: () => payload.isRunning() && !payload.isStale(),
          rewind: () => {
            if (first === undefined) return;
            this.#consumer.seek({ topic: batch.topic, partition: batch.partition, offset: first });
          },
        });
      },
    });
    // kafkajs creates the consumer group synchronously inside run() and fetches only once
    // it has joined: pausing here comes before the first fetch.
    if (paused) this.pause();
    await running;
    this.#running = true;
  }

  /** Stops fetching new batches for the whole topic; batches in progress finish. */
  pause(): void {
    this.#consumer.pause([{ topic: this.#options.topic }]);
  }

  resume(): void {
    this.#consumer.resume([{ topic: this.#options.topic }]);
  }

  /** Leaves the group after the batches in progress finish. */
  async stop(): Promise<void> {
    if (!this.#running) {
      await this.#consumer.disconnect();
      return;
    }
    this.#running = false;
    await this.#consumer.stop();
    await this.#consumer.disconnect();
  }
}

export interface RecordConsumerOptions {
  readonly groupId: string;
  readonly topics: readonly string[];
  /** Where a new group starts. Default true (earliest). */
  readonly fromBeginning?: boolean;
}

/**
 * Reads records one at a time at read_committed, committing automatically:
 * for tools and tests that watch the result and status topics (ferryctl, test helpers).
 */
export class RecordConsumer {
  readonly #consumer: Consumer;
  readonly #options: RecordConsumerOptions;
  constructor(consumer: Consumer, options: RecordConsumerOptions) {
    this.#consumer = consumer;
    this.#options = options;
  }
  async start(onRecord: (record: InboundRecord) => void | Promise<void>): Promise<void> {
    await this.#consumer.connect();
    await this.#consumer.subscribe({
      topics: [...this.#options.topics],
      fromBeginning: this.#options.fromBeginning ?? true,
    });
    await this.#consumer.run({
      eachMessage: async ({ topic, partition, message }) => {
        await onRecord(inbound(topic, partition, message));
      },
    });
  }
  async stop(): Promise<void> {
    await this.#consumer.disconnect();
  }
}
