/**
 * The order machinery of the partitions: each partition's fetched batches wait in its
 * lane and are handled one turn at a time (PartitionLanes); a turn hands its commands
 * out and its batch then waits for its answers and commits in fetch order behind the
 * partition's earlier batches (OrderedCommits), while the lane's next turn may already
 * send. What handling a batch does is BatchProcessor's; this decides when, and what
 * happens to a batch that cannot finish (read again from where, its answers carried).
 */
import type { RecordBatch } from '../kafka/kafka-port.ts';
import type { Logger } from '../observability/logger.ts';
import type { FerryMetrics } from '../observability/metrics.ts';
import type { Tracer } from '../observability/tracing.ts';
import type { BatchProcessor } from './batch-processor.ts';
import { BatchTrace } from './batch-trace.ts';
import type { CommitMetrics } from './commit-metrics.ts';
import { type GroupTurnsContext, prepareTurn, releaseTurn } from './group-turns.ts';
import { OrderedCommits } from './ordered-commits.ts';
import { errorText } from './output-records.ts';
import { PartitionLanes } from './partition-lanes.ts';
import type { PartitionOwnership } from './partition-ownership.ts';
import type { PartitionWorkers } from './partition-worker.ts';
import { answeredInFull, type SendPhase, type SentBatch, sentBatch } from './sent-batch.ts';

/** A fetched batch waiting in its partition's lane. */
export interface LaneBatch {
  readonly batch: RecordBatch;
  readonly receivedMs: number;
  /** Bytes of its records, counted against FERRY_MAX_BYTES_IN_FLIGHT until it is done. */
  readonly bytes: number;
}

/**
 * Consecutive fetched batches of one partition as one: their records in order, the
 * newest lag, and a rewind to the oldest one's first record.
 */
function joinBatches(batches: readonly RecordBatch[]): RecordBatch {
  const first = batches[0];
  const newest = batches[batches.length - 1];
  if (!first || !newest) throw new Error('no batch to join');
  if (batches.length === 1) return first;
  return {
    topic: first.topic,
    partition: first.partition,
    records: batches.flatMap((batch) => batch.records),
    ...(first.fetchedFrom === undefined ? {} : { fetchedFrom: first.fetchedFrom }),
    ...(newest.nextOffset === undefined ? {} : { nextOffset: newest.nextOffset }),
    lag: newest.lag,
    heartbeat: () => newest.heartbeat(),
    isCurrent: () => newest.isCurrent(),
    rewind: (offset) => first.rewind(offset),
  };
}

export interface PartitionTurnsOptions {
  readonly processor: BatchProcessor;
  readonly ownership: PartitionOwnership;
  /** Each partition's worker: where its turn in progress is (`step`). */
  readonly workers: PartitionWorkers;
  readonly commitMetrics: CommitMetrics;
  readonly metrics: Pick<FerryMetrics, 'stageDuration'>;
  readonly logger: Logger;
  readonly tracer?: Tracer | undefined;
  /** See PipelineOptions.commitGapMs. */
  readonly commitGapMs: number;
  /** The pipeline is stopping: batches not begun are left to the partition's next owner. */
  readonly stopping: () => boolean;
  /** A batch is done or dropped: what it counted against the in-flight budget is free. */
  readonly release: (batches: readonly LaneBatch[]) => void;
  /** The consumer's heartbeat interval, ms. */
  readonly heartbeatIntervalMs: () => number;
  /** A partition's preparation for `assignment` ended (readied, or left to its first batch). */
  readonly prepared?: (partition: number, assignment: number) => void;
  /**
   * Clears this replica's intent from the partition's group offset `offset` (see
   * PartitionHandover.clearIntent); unset, nothing is let go at a rebalance.
   */
  readonly clearIntent?: (partition: number, topic: string, offset: string) => Promise<boolean>;
}

export class PartitionTurns {
  readonly #options: PartitionTurnsOptions;
  readonly #log: Logger;
  /** Per partition: the batches handed over, one at a time in fetch order. */
  readonly #lanes: PartitionLanes<LaneBatch>;
  /** Per partition: batches whose commands are out, committed in fetch order. */
  readonly #commits: OrderedCommits<SentBatch>;
  /** What the turns at the group's answers and rebalances need (group-turns.ts). */
  readonly #groupTurns: GroupTurnsContext;

  constructor(options: PartitionTurnsOptions) {
    this.#options = options;
    this.#log = options.logger;
    this.#lanes = new PartitionLanes<LaneBatch>({
      handle: (partition, batches) => this.#turn(partition, batches),
      prepare: (partition) => prepareTurn(this.#groupTurns, partition),
      release: (partition) => releaseTurn(this.#groupTurns, partition),
      drop: options.release,
      assignment: () => options.ownership.assignment,
      lanes: options.workers.view((worker) => worker.lane),
    });
    this.#commits = new OrderedCommits<SentBatch>({
      commit: (partition, sent) => options.processor.commit(partition, sent),
      committed: (partition, sent) => this.#sentCommitted(partition, sent),
      failed: (partition, sent) => this.#sentFailed(partition, sent),
      canCommit: answeredInFull,
      minGapMs: options.commitGapMs,
      queues: options.workers.view((worker) => worker.commits),
    });
    this.#groupTurns = {
      ...options,
      commits: {
        idle: (partition) => this.#commits.idle(partition),
        busy: (partition) => this.#commits.busy(partition),
      },
    };
  }

  /** A fetched batch joins its partition's lane. */
  enter(partition: number, batch: LaneBatch): void {
    this.#lanes.enter(partition, batch);
  }

  /**
   * The group assigned the partition: it is readied (see BatchProcessor.prepare) as its
   * lane's next turn, so its first batch finds it taken over.
   */
  prepare(partition: number): void {
    this.#lanes.prepare(partition);
  }

  /**
   * A rebalance began: each partition with nothing of it in flight here clears this
   * replica's intent, so that its next owner (if the group moves it) neither waits for
   * sends nor looks any up. Only idle lanes (see PartitionLanes.release).
   */
  rebalancing(partitions: readonly number[]): void {
    for (const partition of partitions) this.#lanes.release(partition);
  }

  /** Where a partition's turn in progress is now (set by the turn and the processor). */
  step(partition: number, step: string): void {
    this.#options.workers.get(partition).step = step;
  }

  /** Settles when no turn is in progress and nothing is left to commit; what is queued is dropped. */
  async idle(): Promise<void> {
    this.#lanes.close();
    await this.#lanes.idle();
    await this.#commits.idleAll();
  }

  /**
   * Settles once none of these partitions has a batch waiting to commit or a lane turn in
   * progress (a release after a commit included), or once `signal` is aborted. During a
   * rebalance no turn begins a send (see #turn), so this ends once what was out is
   * answered and committed, or given up.
   */
  async settled(partitions: readonly number[], signal?: AbortSignal): Promise<void> {
    do {
      if (signal?.aborted) return;
      await Promise.all(partitions.map((partition) => this.#commits.idle(partition)));
      // A commit's release turn is queued by the callback that ends it: let it begin.
      await new Promise((resolve) => setImmediate(resolve));
      await this.#lanes.idle();
    } while (partitions.some((partition) => this.#commits.busy(partition)));
  }

  /** What a partition's lane and commits hold now. */
  describe(partition: number): Record<string, unknown> {
    return {
      lane: {
        ...this.#lanes.describe(partition),
        step: this.#options.workers.find(partition)?.step,
      },
      commits: this.#commits.describe(partition),
    };
  }

  /**
   * A partition's turn: the batches it queued, handled as one. Their commands go out,
   * then the turn ends and the lane's next turn may send while these wait for their
   * answers and commit in fetch order (`#commits`). Never rejects: what cannot finish is
   * fetched again (`rewind`).
   */
  async #turn(partition: number, queued: readonly LaneBatch[]): Promise<void> {
    const batch = joinBatches(queued.map((entry) => entry.batch));
    const { stageDuration } = this.#options.metrics;
    const now = Date.now();
    for (const entry of queued) {
      stageDuration.observe({ stage: 'wait' }, (now - entry.receivedMs) / 1000);
    }
    const rewinds = this.#lanes.rewinds(partition);
    // A rewind while this turn ran: its records come again.
    const stale = () => this.#lanes.rewinds(partition) !== rewinds;
    const heartbeat = this.#heartbeatWhileBusy(batch);
    const trace = this.#options.tracer ? new BatchTrace(this.#options.tracer) : undefined;
    const finish = () => {
      clearInterval(heartbeat);
      trace?.close();
      this.#options.release(queued);
    };
    const worker = this.#options.workers.get(partition);
    const step = (name: string) => {
      worker.step = name;
    };
    // Left to the partition's next owner, which reads from the committed offset.
    if (this.#options.stopping()) return finish();
    // A rebalance the group announced: the batch is left to the rejoin, after which the
    // partition is read again from its group offset, here or at its next owner. Sent
    // now, it would only lengthen what the member settles before it rejoins.
    if (this.#options.ownership.rebalancing) {
      worker.step = 'rebalancing: left to the rejoin';
      return finish();
    }
    // The lane handed these batches over in this assignment. Should the group answer
    // while this turn waits for earlier batches, kafkajs reads the partition again from
    // the group offset, these records included: handled here too, they would be sent twice.
    const ownership = this.#options.ownership;
    const generation = ownership.generation;
    const assignment = ownership.assignment;
    const signal = ownership.signal;
    // Taken with the assignment: a batch handed out under it awaits its answers until the
    // group's next answer, not only until the next rebalance starts (see sentBatch).
    const answered = ownership.answeredSignal;
    const waitForEarlier = async () => {
      await this.#commits.idle(partition);
      return !stale() && ownership.holds(partition, assignment);
    };
    if (this.#commits.busy(partition) && !this.#options.processor.canSendAhead(batch)) {
      step('waiting for earlier commits');
      if (!(await waitForEarlier()) || this.#options.stopping()) return finish();
    }
    let sent: SendPhase | 'done' | 'again' | 'rewound';
    step('sending');
    try {
      const exclusive = waitForEarlier;
      sent = await this.#options.processor.send(
        batch,
        generation,
        assignment,
        signal,
        exclusive,
        trace,
      );
    } catch (error: unknown) {
      this.#log.error(
        { partition, err: errorText(error) },
        'batch failed unexpectedly: it is fetched again',
      );
      sent = 'again';
    }
    if (sent === 'rewound') {
      // The takeover read the partition again from its group offset: what is queued behind
      // this batch comes again, at once (no await between the seek and this).
      this.#lanes.rewound(partition);
      step('rewound: read again from the group offset');
      finish();
      return;
    }
    if (typeof sent === 'object') {
      if (stale()) {
        // An earlier batch's commit failed meanwhile: its rewind brings these again.
        this.#options.processor.carry(partition, sent.commands, sent.pending);
        return finish();
      }
      const item = sentBatch(batch, sent, {
        generation,
        assignment,
        signal: answered,
        trace,
        finish,
        onReady: (sendMs) => stageDuration.observe({ stage: 'send' }, sendMs / 1000),
      });
      this.#commits.push(partition, item);
      step(`handed out offsets ${batch.records[0]?.offset}-${sent.lastOffset}`);
      return;
    }
    // Rewinds go in fetch order: an earlier batch still committing may rewind further back.
    step(`${sent}: waiting for earlier commits`);
    await this.#commits.idle(partition);
    let next = 'stale: fetched again already';
    if (!stale()) {
      const last = batch.records[batch.records.length - 1];
      if (sent === 'done') {
        if (last) this.#options.commitMetrics.done(partition, last.offset);
        next = 'committed before';
      } else if (ownership.assignment === assignment) {
        // After a rejoin kafkajs fetches from the committed offset by itself.
        batch.rewind();
        this.#lanes.rewound(partition);
        next = 'rewound';
      } else next = 'left to the rejoin';
    }
    if (sent !== 'done') {
      this.#log.debug(
        { partition, from: batch.records[0]?.offset, outcome: next },
        'batch not handled now: read again',
      );
    }
    step(`${sent}: ${next}`);
    finish();
  }

  /** Answered batches committed: their results are visible. */
  #sentCommitted(partition: number, sent: readonly SentBatch[]): void {
    for (const item of sent) {
      this.#options.commitMetrics.done(partition, item.lastOffset);
      item.finish();
    }
    // Committed while a rebalance is under way: with nothing more of the partition in
    // flight, its intent (carried ahead by this commit) is cleared before the group
    // answers, as for a partition idle when the rebalance began.
    this.#releaseIfRebalancing(partition);
  }

  /**
   * A commit did not happen: these batches (the failed ones and all behind them) are
   * read again, their answers carried over. When any of them is of the current
   * assignment, the partition is fetched again from the oldest of them; when all were
   * handed over before the group's last answer, nothing is needed: kafkajs read the
   * partition again from the group offset after that answer, and that read is still to
   * come. Deciding by the oldest batch's assignment alone would drop the current
   * assignment's read among them and leave the partition unread until the next
   * rebalance.
   */
  #sentFailed(partition: number, sent: readonly SentBatch[]): void {
    const { ownership, processor } = this.#options;
    for (const item of sent) processor.carry(partition, item.commands, item.pending);
    // From the oldest failed batch: at or after the group offset, so nothing is skipped
    // even if kafkajs's re-read after the rejoin began past it.
    const current = sent.some((item) => item.assignment === ownership.assignment);
    const from = current ? sent[0] : undefined;
    this.#log.info(
      {
        partition,
        batches: sent.length,
        from: sent[0]?.batch.records[0]?.offset,
        to: sent[sent.length - 1]?.lastOffset,
        readAgain: from
          ? `rewound to ${from.batch.records[0]?.offset}`
          : 'from the group offset after the rejoin',
      },
      'batches not committed: read again, their answers carried over',
    );
    if (from) {
      from.batch.rewind();
      this.#lanes.rewound(partition);
    }
    for (const item of sent) item.finish();
    // During a rebalance: when all that is carried was given up before it left, the
    // partition is let go like an idle one (its intent cleared before the group answers).
    this.#releaseIfRebalancing(partition);
  }

  /** During a rebalance, lets the partition go once its lane is done (see PartitionLanes.release). */
  #releaseIfRebalancing(partition: number): void {
    if (this.#options.ownership.rebalancing) this.#lanes.release(partition);
  }

  /**
   * Keeps the group membership alive while envelopes are out (or held by a closed gate).
   * Twice per heartbeat interval: kafkajs skips a heartbeat asked for sooner than the
   * interval after the previous one, so asking only once per interval could leave
   * almost two intervals between heartbeats.
   */
  #heartbeatWhileBusy(batch: RecordBatch): NodeJS.Timeout {
    const everyMs = Math.max(50, Math.floor(this.#options.heartbeatIntervalMs() / 2));
    return setInterval(() => {
      // An answer that the group is rebalancing leaves the partitions here until this
      // member rejoins: the consumer announces the rebalance (see Pipeline), and what was
      // handed out still goes out. Taken for a failure, it stopped those sends halfway.
      batch.heartbeat().catch((error: unknown) => {
        // The coordinator forgot this member or cannot be reached: partitions may belong
        // to another replica already, so batches in progress stop sending and return, and
        // kafkajs can rejoin without waiting for the gateway.
        this.#options.ownership.rebalanceStarted();
        this.#log.info(
          { err: error instanceof Error ? error.message : String(error) },
          'heartbeat failed: batches in progress stop sending',
        );
      });
    }, everyMs);
  }
}
