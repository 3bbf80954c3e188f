import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Transport } from '../contract/index.ts';
import type { GroupConsumer } from '../kafka/kafka-port.ts';
import type { Logger } from '../observability/logger.ts';
import { StatusTracker } from '../tracking/status-tracker.ts';
import { BatchProcessor } from './batch-processor.ts';
import { Batcher } from './batcher.ts';
import { CommitMetrics } from './commit-metrics.ts';
import type { DesiredConsumption } from './consumption-mode.ts';
import { Dedupe } from './dedupe.ts';
import { Dispatcher } from './dispatcher.ts';
import { FetchControl } from './fetch-control.ts';
import { FirstTakeovers } from './first-takeovers.ts';
import {
  LANE_TRANSACTION_TIMEOUT_MS,
  LaneTransactions,
  laneTransactionalId,
} from './lane-transactions.ts';
import { PartitionHandover } from './partition-handover.ts';
import { PartitionOwnership } from './partition-ownership.ts';
import { PartitionRouter } from './partition-router.ts';
import { PartitionTransactions } from './partition-transactions.ts';
import { PartitionTurns } from './partition-turns.ts';
import { PartitionWorkers } from './partition-worker.ts';
import type { PipelineControl, PipelineState } from './pipeline-control.ts';
import type { PipelineOptions } from './pipeline-options.ts';
import type { Outbound } from './send-outcome.ts';
import { StallWatch } from './stall-watch.ts';

/**
 * How long a member may keep a rebalancing group waiting while its batches in flight
 * settle: answers of a healthy gateway and a commit take tens of ms; a stuck gateway's
 * sends are left to the next owner's wait instead of holding every partition of the group.
 */
const REJOIN_SETTLE_MAX_MS = 2_000;

export type { PipelineOptions, PipelineTopics } from './pipeline-options.ts';

type Lifecycle = 'idle' | 'starting' | 'running' | 'stopping' | 'stopped';

/**
 * Commands in, results out: consumes the commands topic in batches per partition,
 * validates, batches operations into envelopes across partitions, dispatches them,
 * and commits each partition batch's results, dead letters and offset in one
 * Kafka transaction (per-partition transactional id), in the order of the commands.
 */
export class Pipeline implements PipelineControl {
  readonly #options: PipelineOptions;
  readonly #log: Logger;
  /** Whether this replica fetches and sends: see fetch-control.ts. */
  readonly #fetch: FetchControl;
  readonly #batcher: Batcher<Outbound>;
  readonly #dispatcher: Dispatcher;
  readonly #transactions: PartitionTransactions;
  /** The lane's one transactional producer, with FERRY_TRANSACTIONS=lane. */
  readonly #lane: LaneTransactions | undefined;
  readonly #transports: ReadonlySet<Transport>;
  #consumer: GroupConsumer | undefined;
  #lifecycle: Lifecycle = 'idle';
  /** Names this process in the send intents it writes. */
  readonly #instanceId = randomUUID();
  /** Everything held for each partition, one object per partition: see partition-worker.ts. */
  readonly #workers: PartitionWorkers;
  readonly #ownership: PartitionOwnership;
  readonly #handover: PartitionHandover;
  /** Per partition: its batches' turns, and their commits in fetch order. */
  readonly #turns: PartitionTurns;
  readonly #commitMetrics: CommitMetrics;
  readonly #stallWatch: StallWatch;
  /** Batches to their partition's worker, group answers to every worker. */
  readonly #router: PartitionRouter;
  /** Final status tracking of the messages sent, when on. */
  readonly #tracker: StatusTracker | undefined;
  /** The first assignment's partitions whose preparation has not ended yet. */
  readonly #firstTakeovers = new FirstTakeovers();

  constructor(options: PipelineOptions) {
    this.#options = options;
    this.#workers = new PartitionWorkers(options.dedupe);
    this.#ownership = new PartitionOwnership(this.#workers);
    this.#commitMetrics = new CommitMetrics({ metrics: options.metrics });
    this.#log = options.logger.child({ component: 'pipeline' });
    this.#fetch = new FetchControl({
      metrics: options.metrics,
      logger: this.#log,
      maxCommandsInFlight: options.maxCommandsInFlight,
      maxBytesInFlight: options.maxBytesInFlight,
      accessDeniedRetryMs: options.accessDeniedRetryMs,
      consumer: () => this.#consumer,
      running: () => this.#lifecycle === 'running',
    });
    this.#transports = new Set(
      (['sync', 'async'] as const).filter((t) => options.gateway.supports(t)),
    );
    this.#dispatcher = new Dispatcher({
      gateway: options.gateway,
      gate: this.#fetch.gate,
      logger: this.#log,
      metrics: options.metrics,
      concurrency: options.concurrency,
      rateLimitRps: options.rateLimitRps,
      maxAttempts: options.maxAttempts,
      retryBaseMs: options.retryBaseMs,
      retryMaxMs: options.retryMaxMs,
      retryAfterMaxMs: options.retryAfterMaxMs,
      retryAfterHold: options.retryAfterHold,
      onAccessDenied: (error) => this.#fetch.accessDenied(error),
      lookupDelayMs: options.lookupDelayMs,
      tracer: options.tracer,
    });
    this.#batcher = new Batcher({
      maxOps: options.batchMaxOps,
      lingerMs: options.lingerMs,
      onBatch: (batch) => this.#dispatcher.dispatch(batch),
    });
    this.#lane =
      options.transactions === 'lane'
        ? new LaneTransactions({
            kafka: options.kafka,
            groupId: options.groupId,
            transactionalId: laneTransactionalId(
              options.transactionalIdPrefix,
              options.groupId,
              options.topics.commands,
              this.#instanceId,
            ),
            transactionTimeoutMs: LANE_TRANSACTION_TIMEOUT_MS,
            logger: this.#log,
            onFailure: () =>
              options.metrics.kafkaErrors.inc({ client: 'producer', kind: 'transaction' }),
          })
        : undefined;
    this.#transactions = new PartitionTransactions({
      kafka: options.kafka,
      groupId: options.groupId,
      topic: options.topics.commands,
      transactionalIdPrefix: options.transactionalIdPrefix,
      logger: this.#log,
      metrics: options.metrics,
      workers: this.#workers,
      lane: this.#lane,
    });
    const dedupe = options.dedupe
      ? new Dedupe({
          settings: options.dedupe,
          kafka: options.kafka,
          storeOf: (partition) => this.#workers.get(partition).dedupe,
          metrics: options.metrics,
          logger: this.#log,
        })
      : undefined;
    this.#handover = new PartitionHandover({
      kafka: options.kafka,
      groupId: options.groupId,
      transactions: this.#transactions,
      ownership: this.#ownership,
      logger: this.#log,
      instanceId: this.#instanceId,
      memberId: () => this.#consumer?.memberId,
      membership: () => this.#consumer?.membership,
      inDoubtSettleMs: options.inDoubtSettleMs,
      fencedHoldMs: options.fencedHoldMs,
      dedupe,
    });
    // What running one batch does (see batch-processor.ts).
    const processor = new BatchProcessor({
      metrics: options.metrics,
      logger: this.#log,
      topics: options.topics,
      recordMaxBytes: options.recordMaxBytes,
      propagateHeaders: options.propagateHeaders,
      resultsPartitioning: options.resultsPartitioning,
      lookupDelayMs: options.lookupDelayMs,
      leaseMs: options.leaseMs,
      commandsTopic: options.topics.commands,
      ownership: this.#ownership,
      workers: this.#workers,
      handover: this.#handover,
      dedupe,
      tracking: options.tracking
        ? {
            topic: options.tracking.topic,
            onCommitted: (partition, messages) => this.#tracker?.sentCommitted(partition, messages),
          }
        : undefined,
      dispatcher: this.#dispatcher,
      batcher: this.#batcher,
      commitMetrics: this.#commitMetrics,
      reader: {
        defaultTransport: options.defaultTransport,
        transports: this.#transports,
        maxBytes: options.commandMaxBytes,
        maxDepth: options.commandMaxDepth,
        ...(options.expireAfterMs ? { expireAfterMs: options.expireAfterMs } : {}),
        ...(options.prepare ? { prepare: options.prepare } : {}),
      },
      instanceId: this.#instanceId,
      confirmedAt: () => this.#consumer?.confirmedAt ?? 0,
      stopping: () => this.#lifecycle === 'stopping',
      onStep: (partition, step) => this.#turns.step(partition, step),
    });
    this.#turns = new PartitionTurns({
      processor,
      ownership: this.#ownership,
      workers: this.#workers,
      commitMetrics: this.#commitMetrics,
      metrics: options.metrics,
      logger: this.#log,
      tracer: options.tracer,
      commitGapMs: options.commitGapMs ?? 0,
      stopping: () => this.#stopping,
      // Done, or to be fetched again, or left to the partition's next owner.
      release: (batches) => {
        for (const { batch, bytes } of batches) this.#fetch.track(-batch.records.length, -bytes);
      },
      heartbeatIntervalMs: () => this.#consumer?.heartbeatIntervalMs ?? 3000,
      clearIntent: (partition, topic, offset) =>
        this.#handover.clearIntent(partition, topic, offset),
      prepared: (partition, assignment) => {
        if (assignment !== this.#ownership.assignment) return;
        if (this.#firstTakeovers.ended(partition)) {
          this.#log.info('the partitions of the first assignment are taken over');
        }
      },
    });
    this.#router = new PartitionRouter({
      topic: options.topics.commands,
      metrics: options.metrics,
      logger: this.#log,
      workers: this.#workers,
      ownership: this.#ownership,
      fetch: this.#fetch,
      commitMetrics: this.#commitMetrics,
      turns: this.#turns,
      transactions: this.#transactions,
      consumer: () => this.#consumer,
      dispatcher: this.#dispatcher,
    });
    this.#tracker = options.tracking
      ? new StatusTracker({
          settings: options.tracking,
          kafka: options.kafka,
          commandsTopic: options.topics.commands,
          groupId: options.groupId,
          transactionalIdPrefix: options.transactionalIdPrefix,
          lookUp: (targets) => this.#dispatcher.lookUp(targets),
          logger: this.#log,
          metrics: options.metrics,
          onFull: (full) => this.#fetch.trackingFull(full),
        })
      : undefined;
    this.#stallWatch = new StallWatch({
      logger: this.#log,
      stallAfterMs: options.stallAfterMs ?? 60_000,
      // An operator's pause, a refused key or a drain stop commits on purpose.
      ages: () =>
        this.#fetch.mode.pauseReasons.length > 0 ? new Map() : this.#commitMetrics.ages(),
      describe: (partition) => this.#router.describe(partition),
    });
  }

  get #stopping(): boolean {
    return this.#lifecycle === 'stopping';
  }

  get running(): boolean {
    return this.#lifecycle === 'running' && (this.#consumer?.running ?? false);
  }

  /**
   * Whether the partitions of this replica's first assignment were taken over (or their
   * takeover ended unfinished, left to their first batch): until then a replica started
   * in a rolling deploy is not ready.
   */
  get takenOver(): boolean {
    return this.#firstTakeovers.done;
  }

  /** Joins the consumer group; the topics must exist. Idempotent. */
  async start(): Promise<void> {
    if (this.#lifecycle !== 'idle') return;
    this.#lifecycle = 'starting';
    const { kafka, groupId, topics } = this.#options;
    const consumer = kafka.createBatchConsumer({
      groupId,
      topic: topics.commands,
      partitionsConsumedConcurrently: this.#options.partitionsConsumedConcurrently ?? 16,
      maxBytesPerPartition: this.#options.maxBytesPerPartition ?? 1024 * 1024,
      ...(this.#options.maxBytes ? { maxBytes: this.#options.maxBytes } : {}),
      recordMaxBytes: this.#options.commandMaxBytes,
      // One fetch answer keeps at most the in-flight cap of decompressed records.
      ...(this.#options.maxBytesInFlight
        ? { maxDecompressedBytes: this.#options.maxBytesInFlight }
        : {}),
      ...(this.#options.sessionTimeoutMs
        ? { sessionTimeoutMs: this.#options.sessionTimeoutMs }
        : {}),
      onBatch: (batch) => this.#router.accept(batch),
      onAssignment: (partitions) => {
        this.#router.assigned(partitions);
        this.#firstTakeovers.assigned(partitions);
        this.#tracker?.assigned(partitions);
      },
      beforeRejoin: () => this.#settleBeforeRejoin(),
      onRebalancing: ({ announced }) => {
        this.#ownership.rebalanceStarted({ announced });
        // What is idle here is let go before the group answers: its next owner need not
        // wait out sends of this replica that never happened.
        this.#turns.rebalancing(this.#consumer?.assignedPartitions ?? []);
        this.#log.info(
          announced
            ? 'rebalance started: what was handed out still goes out until this member rejoins; nothing new is sent'
            : 'joining the group again: its partitions may be elsewhere already; batches in progress stop sending',
        );
      },
      onStartRetry: (attempt, error) =>
        this.#log.warn(
          { attempt, err: error instanceof Error ? error.message : String(error) },
          'joining the consumer group failed while Kafka is unsettled; trying again',
        ),
      onCrash: (error) => {
        this.#options.metrics.consumerCrashes.inc();
        this.#options.onCrash(error);
      },
    });
    this.#consumer = consumer;
    // A paused or draining fleet fetches nothing, not even a first batch.
    await consumer.start({ paused: !this.#fetch.mode.fetching });
    this.#commitMetrics.start();
    this.#stallWatch.start();
    this.#tracker?.start();
    if (!this.#fetch.mode.fetching) consumer.pause();
    this.#lifecycle = 'running';
    this.#log.info({ topic: topics.commands, groupId }, 'pipeline started');
  }

  /**
   * Before this member rejoins a rebalancing group: its partitions' batches still out
   * are answered and committed, and each partition with nothing left in flight clears its
   * intent, while the group waits, so a partition that moves finds its next owner nothing
   * to wait out or look up. Bounded: the whole group waits meanwhile.
   */
  async #settleBeforeRejoin(): Promise<void> {
    try {
      await this.#settleInFlight();
    } finally {
      // Once this member has joined again the group can complete without it hearing the
      // answer, and its partitions begin at their next owners: nothing handed out before
      // goes out after this point.
      this.#ownership.rebalanceStarted();
    }
  }

  async #settleInFlight(): Promise<void> {
    const partitions = this.#consumer?.assignedPartitions ?? [];
    // kafkajs also joins again after stale metadata, with no rebalance to settle for.
    if (partitions.length === 0 || this.#lifecycle !== 'running') return;
    if (!this.#ownership.rebalancing) return;
    const startedMs = performance.now();
    const bound = new AbortController();
    const settled = await Promise.race([
      this.#turns.settled(partitions, bound.signal).then(() => true),
      sleep(REJOIN_SETTLE_MAX_MS, false, { signal: bound.signal }).catch(() => false),
    ]);
    bound.abort();
    this.#log.info(
      { settled, waitedMs: Math.round(performance.now() - startedMs) },
      settled
        ? 'rebalance: what was in flight is settled; rejoining'
        : 'rebalance: rejoining with batches still in flight',
    );
  }

  /**
   * Stops fetching, sends what is batched, waits up to `graceMs` for answers, then
   * commits and leaves the group. Commands not answered by then get no result and
   * are read again by the next owner of their partition.
   * @returns true when everything in flight finished within the grace time.
   */
  async stop(graceMs: number): Promise<boolean> {
    if (this.#lifecycle === 'stopped' || this.#lifecycle === 'stopping') return true;
    this.#lifecycle = 'stopping';
    this.#fetch.stop();
    this.#consumer?.pause();
    this.#batcher.flushAll();
    // Batches not begun yet are left to the partitions' next owner; those in progress
    // send what they hold and commit.
    const drained = await Promise.race([
      this.#turns.idle().then(() => true),
      sleep(graceMs).then(() => false),
    ]);
    if (!drained) {
      this.#log.warn({ graceMs }, 'grace time passed with envelopes in flight; abandoning them');
      this.#dispatcher.abort();
      await this.#turns.idle();
    }
    await this.#tracker?.stop();
    await this.#consumer?.stop();
    if (drained) await this.#handover.clearIntents();
    await this.#transactions.close();
    await this.#lane?.close();
    this.#commitMetrics.stop();
    this.#stallWatch.stop();
    this.#lifecycle = 'stopped';
    this.#log.info({ drained }, 'pipeline stopped');
    return drained;
  }

  pause(_reason: 'operator'): void {
    this.setDesired('paused');
  }

  resume(): void {
    this.setDesired('running');
  }

  setDesired(desired: DesiredConsumption): void {
    this.#fetch.setDesired(desired);
  }

  state(): PipelineState {
    const partitions = (this.#consumer?.assignedPartitions ?? []).map((partition) => ({
      topic: this.#options.topics.commands,
      partition,
      lag: this.#workers.find(partition)?.lag ?? -1,
    }));
    const state: PipelineState = {
      running: this.running,
      paused: !this.#fetch.mode.fetching,
      pauseReasons: this.#fetch.mode.pauseReasons,
      desired: this.#fetch.mode.desiredState,
      phase: this.#fetch.mode.phase(this.#fetch.budget.commands),
      partitions,
      envelopesInFlight: this.#dispatcher.inFlight,
      envelopesQueued: this.#dispatcher.queued,
      commandsInFlight: this.#fetch.budget.commands,
    };
    const lastError = this.#fetch.lastError;
    return lastError === undefined ? state : { ...state, lastError };
  }
}
