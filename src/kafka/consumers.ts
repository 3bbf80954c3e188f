/** ferry's consumers: the pipeline's batch consumer and a record reader for tools and tests. */
import { DEFAULT_READ_LIMITS, setTopicReadLimits } from './bounded-fetch.ts';
import { forgetHeartbeats, lastHeartbeatFailure } from './coordinator-loss.ts';
import type { GroupMembership } from './group-fenced-offsets.ts';
import { forgetMembership, liveMembership, trackMemberships } from './group-membership.ts';
import type { BatchConsumerOptions, GroupConsumer, InboundRecord } from './kafka-port.ts';
import type { Consumer } from './kafkajs.ts';
import { inbound } from './records.ts';
import { beforeRejoin, rejoinHookInstalled } from './rejoin-hook.ts';
import { retryWhilePassing } from './start-retry.ts';

export type { BatchConsumerOptions, RecordBatch } from './kafka-port.ts';

/** Requests whose success confirms the group membership (kafkajs API names). */
const MEMBERSHIP_REQUESTS = new Set(['Heartbeat', 'SyncGroup']);

/**
 * Longest heartbeat interval. A member learns that the group is rebalancing from its next
 * heartbeat, and with eager rebalancing every partition of the group stands still until
 * the last member has rejoined: a replica leaving during a rolling deploy stalls the
 * others' partitions for up to this long.
 */
const HEARTBEAT_MAX_MS = 1_000;

/** The heartbeat interval a batch consumer uses (see BatchConsumerOptions.heartbeatIntervalMs). */
export function heartbeatIntervalOf(options: BatchConsumerOptions): number {
  if (options.heartbeatIntervalMs !== undefined) return options.heartbeatIntervalMs;
  const session = options.sessionTimeoutMs ?? 30_000;
  return Math.max(100, Math.min(HEARTBEAT_MAX_MS, Math.floor(session / 10)));
}

/** kafkajs's type of the coordinator's answer that the group is rebalancing. */
const REBALANCE_IN_PROGRESS = 'REBALANCE_IN_PROGRESS';

/**
 * A heartbeat's answer: the coordinator's REBALANCE_IN_PROGRESS is no failure of the
 * membership (kafkajs rejoins for it from its own loop and announces it), other errors are.
 */
async function heartbeatAnswer(heartbeat: Promise<void>): Promise<'ok' | 'rebalancing'> {
  try {
    await heartbeat;
    return 'ok';
  } catch (error: unknown) {
    if ((error as { type?: unknown } | undefined)?.type === REBALANCE_IN_PROGRESS) {
      return 'rebalancing';
    }
    throw error;
  }
}

/** A consumer group member that hands whole fetched batches to one handler, per partition in order. */
export class BatchConsumer implements GroupConsumer {
  readonly #consumer: Consumer;
  readonly #options: BatchConsumerOptions;
  #running = false;
  #assigned: readonly number[] = [];
  #memberId: string | undefined;
  /** When the coordinator last confirmed this membership (a heartbeat or a join), ms. */
  #confirmedAt = 0;
  /** Removes the rejoin callback registered under the current member id. */
  #forgetRejoin: (() => void) | undefined;

  constructor(consumer: Consumer, options: BatchConsumerOptions) {
    this.#consumer = consumer;
    this.#options = options;
    setTopicReadLimits(options.topic, {
      recordMaxBytes: options.recordMaxBytes ?? 1024 * 1024,
      decompressedMaxBytes:
        options.maxDecompressedBytes ?? DEFAULT_READ_LIMITS.decompressedMaxBytes,
    });
    this.heartbeatIntervalMs = heartbeatIntervalOf(options);
    // Before the first join, so that this member's generation is known from it on.
    trackMemberships();
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
      if (this.#memberId !== event.payload.memberId) {
        this.#forgetRejoin?.();
        forgetHeartbeats(this.#memberId);
        forgetMembership(this.#memberId);
        const before = options.beforeRejoin;
        this.#forgetRejoin = before ? beforeRejoin(event.payload.memberId, before) : undefined;
      }
      this.#memberId = event.payload.memberId;
      this.#assigned = [...(event.payload.memberAssignment[options.topic] ?? [])].sort(
        (a, b) => a - b,
      );
      options.onAssignment?.(this.#assigned);
    });
    consumer.on(consumer.events.CRASH, (event) => {
      // kafkajs may keep the crashed run's member id when its leave failed: not a member.
      forgetMembership(this.#memberId);
      if (!event.payload.restart) options.onCrash?.(event.payload.error);
    });
    consumer.on(consumer.events.REBALANCING, () =>
      options.onRebalancing?.({
        announced:
          lastHeartbeatFailure(this.#memberId) === REBALANCE_IN_PROGRESS && rejoinHookInstalled(),
      }),
    );
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

  /**
   * The generation and member id kafkajs holds for this member now (what offsets committed
   * with them are fenced by); undefined before the first join and once it left the group.
   */
  get membership(): GroupMembership | undefined {
    return liveMembership(this.#memberId);
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
    // kafkajs's subscribe reads the topic's metadata once, without retrying a connection
    // reset: a broker killed while a replica starts would otherwise end the start.
    await retryWhilePassing(
      async () => {
        await this.#consumer.connect();
        // A new group starts at the earliest offset: nothing produced before the first
        // start is lost.
        await this.#consumer.subscribe({ topics: [topic], fromBeginning: true });
      },
      {
        undo: () => this.#consumer.disconnect(),
        ...(this.#options.onStartRetry ? { onRetry: this.#options.onStartRetry } : {}),
      },
    );
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
          // kafkajs sets fetchedOffset on every batch but leaves it out of its types.
          fetchedFrom: String((batch as { fetchedOffset?: unknown }).fetchedOffset ?? first),
          nextOffset: (BigInt(batch.lastOffset()) + 1n).toString(),
          lag: Math.max(0, Number(batch.offsetLag())),
          membership: this.membership,
          heartbeat: () => heartbeatAnswer(payload.heartbeat()),
          isCurrent: () => payload.isRunning() && !payload.isStale(),
          rewind: (offset) => {
            const from = offset ?? first;
            if (from === undefined) return;
            this.#consumer.seek({ topic: batch.topic, partition: batch.partition, offset: from });
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
    this.#forgetRejoin?.();
    this.#forgetRejoin = undefined;
    forgetHeartbeats(this.#memberId);
    forgetMembership(this.#memberId);
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
