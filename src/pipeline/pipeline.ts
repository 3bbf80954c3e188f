import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Transport } from '../contract/index.ts';
import type { GroupConsumer, KafkaPort, RecordBatch } from '../kafka/kafka-port.ts';
import type { Logger } from '../observability/logger.ts';
import type { FerryMetrics } from '../observability/metrics.ts';
import type { Tracer } from '../observability/tracing.ts';
import type { GatewayClient } from '../upstream/gateway-client.ts';
import { BatchProcessor } from './batch-processor.ts';
import { inSequence } from './batch-sequence.ts';
import { Batcher } from './batcher.ts';
import type { PrepareOperation } from './command.ts';
import { CommitMetrics } from './commit-metrics.ts';
import { ConsumptionMode, type DesiredConsumption } from './consumption-mode.ts';
import { Dispatcher } from './dispatcher.ts';
import { batchBytes, InFlightBudget } from './in-flight-budget.ts';
import { PartitionHandover } from './partition-handover.ts';
import { PartitionOwnership } from './partition-ownership.ts';
import { PartitionTransactions } from './partition-transactions.ts';
import { PartitionTurns } from './partition-turns.ts';
import { PartitionWorkers } from './partition-worker.ts';
import type { PipelineControl, PipelineState } from './pipeline-control.ts';
import { SendGate } from './send-gate.ts';
import type { Outbound } from './send-outcome.ts';
import { StallWatch } from './stall-watch.ts';

export interface PipelineTopics {
  readonly commands: string;
  readonly results: string;
  readonly dlq: string;
}

export interface PipelineOptions {
  readonly kafka: KafkaPort;
  readonly gateway: GatewayClient;
  readonly logger: Logger;
  readonly metrics: FerryMetrics;
  readonly groupId: string;
  readonly topics: PipelineTopics;
  readonly defaultTransport: Transport;
  /** Prefix of the per-partition transactional ids; stable across restarts so a restarted replica fences its predecessor. */
  readonly transactionalIdPrefix: string;
  readonly batchMaxOps: number;
  readonly lingerMs: number;
  readonly concurrency: number;
  readonly rateLimitRps: number;
  readonly maxAttempts: number;
  readonly retryBaseMs: number;
  readonly retryMaxMs: number;
  /** Longest send hold a gateway's `Retry-After` can ask for (FERRY_RETRY_AFTER_MAX_MS). */
  readonly retryAfterMaxMs: number;
  /**
   * How long, counted on this replica's clock from its takeover, another replica's sends
   * of the partition can still be in flight (a request timeout plus a margin: that
   * replica stops starting sends once its lease lapses); only then are they looked up.
   */
  readonly inDoubtSettleMs: number;
  /**
   * A replica sends only while the group coordinator confirmed its membership less than
   * this long ago (ms). Shorter than the session timeout, so a replica that was frozen
   * or cut off stops sending before its partitions can have moved to another one.
   */
  readonly leaseMs: number;
  /** How long a fenced partition is left alone unless the group reassigns it (the session timeout). */
  readonly fencedHoldMs: number;
  /** Least wait between a failed attempt and the status lookup of its sends (the request timeout). */
  readonly lookupDelayMs: number;
  /** After `Access denied`, try sending again after this long; 0 waits for an operator. */
  readonly accessDeniedRetryMs: number;
  /** Adds fields to an operation before it is sent (hook injection). */
  readonly prepare?: PrepareOperation;
  /** Lower-case command header names copied to its result record (FERRY_PROPAGATE_HEADERS). */
  readonly propagateHeaders?: readonly string[];
  /**
   * Commands read and not yet committed, at most; past it fetching pauses until half
   * of them are done (backpressure: memory stays bounded whatever the partition count).
   */
  readonly maxCommandsInFlight: number;
  /** Bytes of the records of those commands, at most (FERRY_MAX_BYTES_IN_FLIGHT); same bound. */
  readonly maxBytesInFlight?: number;
  /** Batches of different partitions in progress at once. Default 16. */
  readonly partitionsConsumedConcurrently?: number;
  /** Bytes fetched per partition per request. Default 1 MiB. */
  readonly maxBytesPerPartition?: number;
  /**
   * Least time between the end of a partition's result transaction and the start of its
   * next, ms (FERRY_COMMIT_GAP_MS): batches answered meanwhile join the next one.
   */
  readonly commitGapMs?: number;
  /** Results in the partition of their key's hash, or in their command's partition number (FERRY_RESULTS_PARTITIONING). */
  readonly resultsPartitioning?: 'key' | 'source';
  /** Bytes of one fetch over all partitions. Default 4 MiB. */
  readonly maxBytes?: number;
  /** Command record values longer than this are refused unparsed (FERRY_COMMAND_MAX_BYTES). */
  readonly commandMaxBytes: number;
  /** Command record values nested deeper than this are refused unparsed (FERRY_COMMAND_MAX_DEPTH). */
  readonly commandMaxDepth: number;
  /** Result and dead-letter records are cut to fit this many bytes (FERRY_RECORD_MAX_BYTES). */
  readonly recordMaxBytes: number;
  readonly sessionTimeoutMs?: number;
  /** The consumer stopped for good: the process should exit non-zero so its supervisor restarts it. */
  readonly onCrash: (error: Error) => void;
  /** Traces each command from consume to committed result; absent when tracing is off. */
  readonly tracer?: Tracer | undefined;
  /** A partition with commands read and nothing committed for this long is logged as stalled (ms). Default 60 000. */
  readonly stallAfterMs?: number;
}

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
  readonly #gate = new SendGate();
  /** The operator's desired state against this replica's own stops: see consumption-mode.ts. */
  readonly #mode = new ConsumptionMode();
  readonly #batcher: Batcher<Outbound>;
  readonly #dispatcher: Dispatcher;
  readonly #transactions: PartitionTransactions;
  readonly #transports: ReadonlySet<Transport>;
  #consumer: GroupConsumer | undefined;
  #lifecycle: Lifecycle = 'idle';
  /** Commands and bytes read and not yet done; fetching pauses while it is exhausted. */
  readonly #budget: InFlightBudget;
  /** Whether fetching was on at the last #sync, so that only changes are logged. */
  #fetching = true;
  #lastError: string | undefined;
  #accessDeniedTimer: NodeJS.Timeout | undefined;
  /** Names this process in the send intents it writes. */
  readonly #instanceId = randomUUID();
  /** What this replica knows about each partition: see partition-ownership.ts. */
  /** Everything held for each partition, one object per partition: see partition-worker.ts. */
  readonly #workers = new PartitionWorkers();
  readonly #ownership = new PartitionOwnership(this.#workers);
  readonly #handover: PartitionHandover;
  /** What running one batch does (see batch-processor.ts). */
  readonly #processor: BatchProcessor;
  /** Per partition: its batches' turns, and their commits in fetch order. */
  readonly #turns: PartitionTurns;
  readonly #commitMetrics: CommitMetrics;
  readonly #stallWatch: StallWatch;

  constructor(options: PipelineOptions) {
    this.#options = options;
    this.#commitMetrics = new CommitMetrics({ metrics: options.metrics });
    this.#budget = new InFlightBudget({
      maxCommands: options.maxCommandsInFlight,
      maxBytes: options.maxBytesInFlight ?? Number.POSITIVE_INFINITY,
    });
    this.#log = options.logger.child({ component: 'pipeline' });
    this.#transports = new Set(
      (['sync', 'async'] as const).filter((t) => options.gateway.supports(t)),
    );
    this.#dispatcher = new Dispatcher({
      gateway: options.gateway,
      gate: this.#gate,
      logger: this.#log,
      metrics: options.metrics,
      concurrency: options.concurrency,
      rateLimitRps: options.rateLimitRps,
      maxAttempts: options.maxAttempts,
      retryBaseMs: options.retryBaseMs,
      retryMaxMs: options.retryMaxMs,
      retryAfterMaxMs: options.retryAfterMaxMs,
      onAccessDenied: (error) => this.#accessDenied(error),
      lookupDelayMs: options.lookupDelayMs,
      tracer: options.tracer,
    });
    this.#batcher = new Batcher({
      maxOps: options.batchMaxOps,
      lingerMs: options.lingerMs,
      onBatch: (batch) => this.#dispatcher.dispatch(batch),
    });
    this.#transactions = new PartitionTransactions({
      kafka: options.kafka,
      groupId: options.groupId,
      topic: options.topics.commands,
      transactionalIdPrefix: options.transactionalIdPrefix,
      logger: this.#log,
      metrics: options.metrics,
      workers: this.#workers,
    });
    this.#handover = new PartitionHandover({
      kafka: options.kafka,
      groupId: options.groupId,
      transactions: this.#transactions,
      ownership: this.#ownership,
      logger: this.#log,
      instanceId: this.#instanceId,
      memberId: () => this.#consumer?.memberId,
      inDoubtSettleMs: options.inDoubtSettleMs,
      fencedHoldMs: options.fencedHoldMs,
    });
    this.#processor = new BatchProcessor({
      metrics: options.metrics,
      logger: this.#log,
      topics: options.topics,
      recordMaxBytes: options.recordMaxBytes,
      propagateHeaders: options.propagateHeaders,
      resultsPartitioning: options.resultsPartitioning,
      lookupDelayMs: options.lookupDelayMs,
      leaseMs: options.leaseMs,
      ownership: this.#ownership,
      workers: this.#workers,
      handover: this.#handover,
      dispatcher: this.#dispatcher,
      batcher: this.#batcher,
      commitMetrics: this.#commitMetrics,
      reader: {
        defaultTransport: options.defaultTransport,
        transports: this.#transports,
        maxBytes: options.commandMaxBytes,
        maxDepth: options.commandMaxDepth,
        ...(options.prepare ? { prepare: options.prepare } : {}),
      },
      instanceId: this.#instanceId,
      confirmedAt: () => this.#consumer?.confirmedAt ?? 0,
      stopping: () => this.#lifecycle === 'stopping',
      onStep: (partition, step) => this.#turns.step(partition, step),
    });
    this.#turns = new PartitionTurns({
      processor: this.#processor,
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
        for (const { batch, bytes } of batches) this.#track(-batch.records.length, -bytes);
      },
      heartbeatIntervalMs: () => this.#consumer?.heartbeatIntervalMs ?? 3000,
    });
    this.#stallWatch = new StallWatch({
      logger: this.#log,
      stallAfterMs: options.stallAfterMs ?? 60_000,
      // An operator's pause, a refused key or a drain stop commits on purpose.
      ages: () => (this.#mode.pauseReasons.length > 0 ? new Map() : this.#commitMetrics.ages()),
      describe: (partition) => this.#describe(partition),
    });
  }

  /** What the pipeline holds for one partition now (the stall warning's details). */
  #describe(partition: number): Record<string, unknown> {
    return {
      ...this.#turns.describe(partition),
      worker: this.#workers.get(partition).describe(this.#ownership.owns(partition)),
      generation: this.#ownership.generation,
      assignment: this.#ownership.assignment,
      inFlight: {
        commands: this.#budget.commands,
        bytes: this.#budget.bytes,
        exhausted: this.#budget.exhausted,
      },
      fetchingPaused: this.#consumer?.paused,
      envelopes: { inFlight: this.#dispatcher.inFlight, queued: this.#dispatcher.queued },
    };
  }

  get #stopping(): boolean {
    return this.#lifecycle === 'stopping';
  }

  get running(): boolean {
    return this.#lifecycle === 'running' && (this.#consumer?.running ?? false);
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
      onBatch: (batch) => this.#accept(batch),
      onAssignment: (partitions) => this.#assigned(partitions),
      onRebalancing: () => {
        this.#ownership.rebalanceStarted();
        this.#log.info('rebalance started: batches in progress stop sending');
      },
      onCrash: (error) => {
        this.#options.metrics.consumerCrashes.inc();
        this.#options.onCrash(error);
      },
    });
    this.#consumer = consumer;
    // A paused or draining fleet fetches nothing, not even a first batch.
    await consumer.start({ paused: !this.#mode.fetching });
    this.#commitMetrics.start();
    this.#stallWatch.start();
    if (!this.#mode.fetching) consumer.pause();
    this.#lifecycle = 'running';
    this.#log.info({ topic: topics.commands, groupId }, 'pipeline started');
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
    clearTimeout(this.#accessDeniedTimer);
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
    await this.#consumer?.stop();
    if (drained) await this.#handover.clearIntents();
    await this.#transactions.close();
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
    this.#mode.desired(desired);
    if (this.#mode.accessDeniedCause === undefined) clearTimeout(this.#accessDeniedTimer);
    this.#sync();
  }

  state(): PipelineState {
    const partitions = (this.#consumer?.assignedPartitions ?? []).map((partition) => ({
      topic: this.#options.topics.commands,
      partition,
      lag: this.#workers.find(partition)?.lag ?? -1,
    }));
    const state: PipelineState = {
      running: this.running,
      paused: !this.#mode.fetching,
      pauseReasons: this.#mode.pauseReasons,
      desired: this.#mode.desiredState,
      phase: this.#mode.phase(this.#budget.commands),
      partitions,
      envelopesInFlight: this.#dispatcher.inFlight,
      envelopesQueued: this.#dispatcher.queued,
      commandsInFlight: this.#budget.commands,
    };
    return this.#lastError === undefined ? state : { ...state, lastError: this.#lastError };
  }

  /** A fetched batch joins its partition's lane; kafkajs fetches on meanwhile. */
  #accept(fetched: RecordBatch): void {
    const { metrics } = this.#options;
    const worker = this.#workers.get(fetched.partition);
    const batch = inSequence(fetched, worker.sequence, (from) =>
      this.#log.warn(
        { partition: fetched.partition, expected: from, batchFrom: fetched.records[0]?.offset },
        'a batch began past where its partition should continue: reading it again from there',
      ),
    );
    if (!batch) return;
    const first = batch.records[0];
    const last = batch.records[batch.records.length - 1];
    if (!first || !last) return;
    worker.lag = batch.lag;
    metrics.consumerLag.set({ topic: batch.topic, partition: String(batch.partition) }, batch.lag);
    const receivedMs = Date.now();
    metrics.stageDuration.observe(
      { stage: 'fetch' },
      Math.max(0, receivedMs - Number(first.timestamp)) / 1000,
    );
    worker.lastFetched = { atMs: receivedMs, lastOffset: last.offset };
    const bytes = batchBytes(batch.records);
    this.#track(batch.records.length, bytes);
    this.#commitMetrics.read(batch.partition, last.offset);
    this.#turns.enter(batch.partition, { batch, receivedMs, bytes });
  }

  #assigned(partitions: readonly number[]): void {
    const owned = new Set(partitions);
    // Work begun before the group's answer stops sending and waiting. kafkajs says a
    // rebalance starts only when a heartbeat tells it; it also rejoins on its own (stale
    // metadata in a fetch, an unknown member id) with no such word before the answer.
    this.#ownership.rebalanceStarted();
    for (const worker of this.#workers) worker.sequence.assigned();
    // A member the group expelled and took back under a new id (after a freeze, a lost
    // connection) may have been fenced meanwhile: every producer is initialised again,
    // which also fences whoever held a partition in between.
    const { rejoined } = this.#ownership.assigned(partitions, this.#consumer?.memberId);
    const lost = this.#transactions.partitions.filter((p) => rejoined || !owned.has(p));
    for (const worker of this.#workers) {
      const { partition } = worker;
      if (owned.has(partition) || worker.lag === undefined) continue;
      worker.lag = undefined;
      this.#options.metrics.consumerLag.remove({
        topic: this.#options.topics.commands,
        partition: String(partition),
      });
    }
    void this.#transactions.close(lost);
    this.#commitMetrics.owned(partitions);
    // kafkajs forgets paused topics when it restarts its consumer after a crash; every
    // join comes before that consumer's first fetch, so a paused replica stays paused.
    if (!this.#mode.fetching || this.#budget.exhausted) this.#consumer?.pause();
    this.#log.info({ partitions }, 'partitions assigned');
  }

  #accessDenied(error: string): void {
    const { accessDeniedRetryMs, metrics } = this.#options;
    this.#lastError = error;
    this.#mode.accessDenied(error);
    this.#sync();
    metrics.accessDenied.set(1);
    this.#log.error(
      { retryInMs: accessDeniedRetryMs || undefined },
      'the gateway answered Access denied: sending stopped until the key is fixed and ferry is resumed',
    );
    if (accessDeniedRetryMs > 0) {
      clearTimeout(this.#accessDeniedTimer);
      this.#accessDeniedTimer = setTimeout(() => {
        this.#log.info('trying the gateway again after Access denied');
        this.#mode.accessRetried();
        this.#sync();
      }, accessDeniedRetryMs);
      this.#accessDeniedTimer.unref();
    }
  }

  /** Counts commands and bytes in flight and pauses or resumes fetching around their bounds. */
  #track(delta: number, bytes: number): void {
    const transition = this.#budget.change(delta, bytes);
    if (transition === 'pause') {
      this.#options.metrics.consumptionPaused.set({ reason: 'backpressure' }, 1);
      this.#consumer?.pause();
    } else if (transition === 'resume') {
      this.#options.metrics.consumptionPaused.set({ reason: 'backpressure' }, 0);
      if (this.#mode.fetching && this.#lifecycle === 'running') this.#consumer?.resume();
    }
  }

  /** Brings the send gate, fetching and the metrics in line with the consumption mode. */
  #sync(): void {
    const { metrics } = this.#options;
    const mode = this.#mode;
    const reasons = mode.pauseReasons;
    if (reasons.includes('operator')) this.#gate.close('operator');
    else this.#gate.release('operator');
    if (reasons.includes('access_denied')) this.#gate.close('access_denied');
    else this.#gate.release('access_denied');
    for (const reason of ['operator', 'access_denied', 'draining'] as const) {
      metrics.consumptionPaused.set({ reason }, reasons.includes(reason) ? 1 : 0);
    }
    if (!reasons.includes('access_denied')) metrics.accessDenied.set(0);
    const fetching = mode.fetching;
    if (!fetching) this.#consumer?.pause();
    else if (!this.#budget.exhausted && this.#lifecycle === 'running') this.#consumer?.resume();
    if (fetching !== this.#fetching) {
      this.#fetching = fetching;
      if (fetching) this.#log.info('consumption resumed');
      else this.#log.info({ reasons }, 'consumption paused');
    }
  }
}
