/**
 * Where the consumer's events meet the partitions: a fetched batch goes to its
 * partition's worker (checked for sequence, counted against the in-flight budget, into
 * its lane), and each group answer starts a new assignment for every worker (work begun
 * before it stops, producers of partitions gone or of a member taken back are closed).
 * It also tells what a partition holds now, for the stall warning.
 */
import type { GroupConsumer, RecordBatch } from '../kafka/kafka-port.ts';
import type { Logger } from '../observability/logger.ts';
import type { FerryMetrics } from '../observability/metrics.ts';
import { inSequence } from './batch-sequence.ts';
import type { CommitMetrics } from './commit-metrics.ts';
import type { Dispatcher } from './dispatcher.ts';
import type { FetchControl } from './fetch-control.ts';
import { batchBytes } from './in-flight-budget.ts';
import type { PartitionOwnership } from './partition-ownership.ts';
import type { PartitionTransactions } from './partition-transactions.ts';
import type { PartitionTurns } from './partition-turns.ts';
import type { PartitionWorkers } from './partition-worker.ts';

export interface PartitionRouterOptions {
  readonly topic: string;
  readonly metrics: FerryMetrics;
  readonly logger: Logger;
  readonly workers: PartitionWorkers;
  readonly ownership: PartitionOwnership;
  readonly fetch: FetchControl;
  readonly commitMetrics: CommitMetrics;
  readonly turns: PartitionTurns;
  readonly transactions: PartitionTransactions;
  readonly consumer: () => GroupConsumer | undefined;
  /** Its envelopes in flight and queued, for the stall warning. */
  readonly dispatcher: Pick<Dispatcher, 'inFlight' | 'queued'>;
}

export class PartitionRouter {
  readonly #options: PartitionRouterOptions;
  readonly #log: Logger;

  constructor(options: PartitionRouterOptions) {
    this.#options = options;
    this.#log = options.logger;
  }

  /** A fetched batch joins its partition's lane; kafkajs fetches on meanwhile. */
  accept(fetched: RecordBatch): void {
    const { metrics } = this.#options;
    const worker = this.#options.workers.get(fetched.partition);
    const batch = inSequence(fetched, worker.sequence, (from) =>
      this.#log.info(
        { partition: fetched.partition, expected: from, fetchedFrom: fetched.fetchedFrom },
        'a batch was fetched from past where its partition should continue: reading it again from there',
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
    this.#options.fetch.track(batch.records.length, bytes);
    this.#options.commitMetrics.read(batch.partition, last.offset);
    this.#options.turns.enter(batch.partition, { batch, receivedMs, bytes });
  }

  assigned(partitions: readonly number[]): void {
    const owned = new Set(partitions);
    // Work begun before the group's answer stops sending and waiting. kafkajs says a
    // rebalance starts only when a heartbeat tells it; it also rejoins on its own (stale
    // metadata in a fetch, an unknown member id) with no such word before the answer.
    this.#options.ownership.rebalanceStarted();
    for (const worker of this.#options.workers) worker.sequence.assigned();
    // A member the group expelled and took back under a new id (after a freeze, a lost
    // connection) may have been fenced meanwhile: every producer is initialised again,
    // which also fences whoever held a partition in between.
    const { rejoined } = this.#options.ownership.assigned(
      partitions,
      this.#options.consumer()?.memberId,
    );
    const lost = this.#options.transactions.partitions.filter((p) => rejoined || !owned.has(p));
    for (const worker of this.#options.workers) {
      const { partition } = worker;
      if (owned.has(partition)) continue;
      // Another replica owns its ids now; they are read back should it come back.
      if (worker.dedupe.size > 0 || worker.dedupe.onTheirWay > 0) {
        worker.dedupe.cleared();
        this.#options.metrics.dedupeIds.remove({ partition: String(partition) });
      }
      if (worker.lag === undefined) continue;
      worker.lag = undefined;
      this.#options.metrics.consumerLag.remove({
        topic: this.#options.topic,
        partition: String(partition),
      });
    }
    void this.#options.transactions.close(lost);
    this.#options.commitMetrics.owned(partitions);
    // Each owned partition is taken over now, not when its first batch arrives.
    for (const partition of partitions) this.#options.turns.prepare(partition);
    // kafkajs forgets paused topics when it restarts its consumer after a crash; every
    // join comes before that consumer's first fetch, so a paused replica stays paused.
    if (this.#options.fetch.held) this.#options.consumer()?.pause();
    this.#log.info({ partitions }, 'partitions assigned');
  }

  /** What the pipeline holds for one partition now (the stall warning's details). */
  describe(partition: number): Record<string, unknown> {
    const worker = this.#options.workers.get(partition);
    const fetched = worker.lastFetched;
    return {
      ...this.#options.turns.describe(partition),
      ownership: {
        ...worker.describe(this.#options.ownership.owns(partition)),
        generation: this.#options.ownership.generation,
        assignment: this.#options.ownership.assignment,
      },
      lastFetched: fetched
        ? { offset: fetched.lastOffset, agoMs: Date.now() - fetched.atMs }
        : undefined,
      lag: worker.lag,
      inFlight: {
        commands: this.#options.fetch.budget.commands,
        bytes: this.#options.fetch.budget.bytes,
        exhausted: this.#options.fetch.budget.exhausted,
      },
      fetchingPaused: this.#options.consumer()?.paused,
      envelopes: {
        inFlight: this.#options.dispatcher.inFlight,
        queued: this.#options.dispatcher.queued,
      },
    };
  }
}
