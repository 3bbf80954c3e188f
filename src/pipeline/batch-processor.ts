/**
 * One partition batch from takeover until its results are committed: the handover
 * checks, the send intent, lookups of what an earlier owner may have sent, the sends,
 * and the transaction of results, dead letters and offset. The pipeline decides when a
 * batch runs (lanes, backpressure, lifecycle); this decides what running it does.
 */
import type { InboundRecord, RecordBatch } from '../kafka/kafka-port.ts';
import type { Logger } from '../observability/logger.ts';
import { boundedTypeLabel, type FerryMetrics } from '../observability/metrics.ts';
import { incEach } from '../observability/tally.ts';
import type { CommandSpan } from '../observability/tracing.ts';
import { pause, unlessAborted } from './abortable.ts';
import type { BatchTrace } from './batch-trace.ts';
import type { Batcher } from './batcher.ts';
import type { Command, CommandReaderOptions, ValidCommand } from './command.ts';
import type { CommitMetrics } from './commit-metrics.ts';
import type { Dispatcher } from './dispatcher.ts';
import { readCommandGuarded } from './last-resort.ts';
import { buildOutputRecords, errorText } from './output-records.ts';
import type { PartitionHandover } from './partition-handover.ts';
import type { PartitionOwnership } from './partition-ownership.ts';
import type { PartitionWorkers } from './partition-worker.ts';
import { type Result, sendResult, validationResult } from './result.ts';
import { isReconcilable, maxOffset, type SendIntent } from './send-intent.ts';
import {
  type LookupAnswer,
  type Outbound,
  outcomeOfLookup,
  type SendOutcome,
} from './send-outcome.ts';
import type { SendPhase, SentBatch } from './sent-batch.ts';

export interface BatchProcessorOptions {
  readonly metrics: FerryMetrics;
  readonly logger: Logger;
  readonly topics: { readonly results: string; readonly dlq: string };
  readonly recordMaxBytes: number;
  readonly propagateHeaders?: readonly string[] | undefined;
  /** `source`: each result in its command's partition number, not its key's hash. */
  readonly resultsPartitioning?: 'key' | 'source' | undefined;
  /** See PipelineOptions.lookupDelayMs and leaseMs. */
  readonly lookupDelayMs: number;
  readonly leaseMs: number;
  readonly ownership: PartitionOwnership;
  /** Each partition's worker: where its batches must continue (see batch-sequence.ts). */
  readonly workers: PartitionWorkers;
  readonly handover: PartitionHandover;
  readonly dispatcher: Dispatcher;
  readonly batcher: Batcher<Outbound>;
  readonly commitMetrics: CommitMetrics;
  readonly reader: CommandReaderOptions;
  /** Names this process in the send intents it writes. */
  readonly instanceId: string;
  /** When the group coordinator last confirmed this member, ms since the epoch (0: never). */
  readonly confirmedAt: () => number;
  /** The pipeline is stopping: partial envelopes go out at once. */
  readonly stopping: () => boolean;
  /** Where a batch's send phase is waiting now (for the stall warning). */
  readonly onStep?: (partition: number, step: string) => void;
}

/** The offset `count` records past `offset`. */
function ahead(offset: string, count: number): string {
  return (BigInt(offset) + BigInt(count)).toString();
}

/**
 * Records past a batch that the send intent written with it covers in advance, so that
 * the next batches need no intent transaction of their own. Fetched batches vary in size
 * under load, so one batch's length ahead left every second batch uncovered; the price of
 * a longer reach is paid only after a failover, when the next owner looks those offsets
 * up in a few large envelopes instead of sending them straight away.
 */
const INTENT_REACH_MIN = 256;

function intentReach(batchLength: number): number {
  return Math.max(2 * batchLength, INTENT_REACH_MIN);
}

const FENCED_RETRY_MS = 500;

export class BatchProcessor {
  readonly #options: BatchProcessorOptions;
  readonly #log: Logger;
  readonly #ownership: PartitionOwnership;
  readonly #handover: PartitionHandover;
  readonly #dispatcher: Dispatcher;
  readonly #batcher: Batcher<Outbound>;
  readonly #commitMetrics: CommitMetrics;
  readonly #reader: CommandReaderOptions;
  readonly #instanceId: string;

  constructor(options: BatchProcessorOptions) {
    this.#options = options;
    this.#log = options.logger;
    this.#ownership = options.ownership;
    this.#handover = options.handover;
    this.#dispatcher = options.dispatcher;
    this.#batcher = options.batcher;
    this.#commitMetrics = options.commitMetrics;
    this.#reader = options.reader;
    this.#instanceId = options.instanceId;
  }

  /**
   * Whether a batch's sends may go out while earlier batches of its partition are still
   * at the gateway or committing: only when it needs neither the partition's producer
   * (a takeover, an intent transaction) nor a settled view of the partition (doubt, a
   * fencing, a quiet period). Else it waits until those batches are committed.
   */
  canSendAhead(batch: RecordBatch): boolean {
    const ownership = this.#ownership;
    const { partition } = batch;
    const last = batch.records[batch.records.length - 1];
    return (
      last !== undefined &&
      !ownership.needsTakeover(partition) &&
      ownership.fencedState(partition) === 'free' &&
      ownership.quietFor(partition) === 0 &&
      ownership.doubtUntil(partition) === undefined &&
      ownership.covers(partition, last.offset)
    );
  }

  /**
   * A fetched batch of a partition from takeover until its commands are handed out. Every
   * wait in it ends as soon as a rebalance starts (`signal`): the batch is then read
   * again, so kafkajs can rejoin the group without waiting for the gateway or a lookup.
   * `exclusive` waits until no earlier batch of the partition is uncommitted, and says
   * whether this batch is still to be handled then (else a failed commit before it
   * rewound the partition): a takeover renews the partition's producer and an intent
   * transaction commits the offset of this batch's first record, so neither may run
   * while earlier batches are still to commit.
   * @returns what its commit needs; `done` when an earlier owner committed all of it.
   */
  async send(
    batch: RecordBatch,
    generation: number,
    assignment: number,
    signal: AbortSignal,
    exclusive: () => Promise<boolean>,
    trace?: BatchTrace,
  ): Promise<SendPhase | 'done' | 'again' | 'rewound'> {
    const ownership = this.#ownership;
    const { partition } = batch;
    if (ownership.fencedState(partition) === 'hold') {
      // Another replica initialised this partition's producer: it is not ours until the
      // group says so again. Touching the producer now would fence the rightful owner.
      await pause(FENCED_RETRY_MS, signal);
      return 'again';
    }
    if (!(await pause(ownership.quietFor(partition), signal))) return 'again';
    ownership.quietOver(partition);
    if (ownership.needsTakeover(partition)) {
      this.#options.onStep?.(partition, 'waiting for earlier commits before its takeover');
      if (!(await exclusive())) return 'again';
      this.#options.onStep?.(partition, 'taking over');
      const takeover = await this.#handover.takeOver(partition, signal, assignment);
      if (takeover === 'rebalancing') return 'again';
      if (takeover === 'unknown') {
        await pause(FENCED_RETRY_MS, signal);
        return 'again';
      }
      if (takeover === 'not-owner') {
        // The group is rebalancing or forgot this member: fencing now could take the
        // partition from its rightful owner. kafkajs rejoins, and the group decides.
        ownership.rebalanceStarted();
        await pause(FENCED_RETRY_MS, signal);
        return 'again';
      }
      // A batch fetched before the rejoin can arrive after it, from past the group offset:
      // the records between would never be read, and this batch's commit would skip them.
      const first = batch.records[0];
      const check = first
        ? this.#options.workers
            .get(partition)
            .sequence.atTakeover(
              ownership.floor(partition) ?? 0n,
              batch.fetchedFrom ?? first.offset,
            )
        : undefined;
      if (check?.kind === 'gap') {
        this.#log.warn(
          { partition, groupOffset: check.from, fetchedFrom: batch.fetchedFrom ?? first?.offset },
          "a batch began past the partition's group offset: reading the partition again from there",
        );
        batch.rewind(check.from);
        return 'rewound';
      }
    }
    // kafkajs may have read the group offset before the previous owner's last commit:
    // what that owner committed is skipped, in this batch and the ones after it.
    const floor = ownership.floor(partition);
    const inbound =
      floor === undefined ? batch.records : batch.records.filter((r) => BigInt(r.offset) >= floor);
    const first = inbound[0];
    const last = inbound[inbound.length - 1];
    if (!first || !last) return 'done';
    const firstOffset = first.offset;
    const lastOffset = last.offset;
    const commands = inbound.map((record) =>
      readCommandGuarded(record, this.#reader, (r, error) => this.#internalError('read', r, error)),
    );
    trace?.begin(commands);
    incEach(
      this.#options.metrics.commandsConsumed,
      commands.map((command) => ({ transport: command.transport })),
    );
    incEach(
      this.#options.metrics.validationFailures,
      commands.flatMap((command) => (command.kind === 'invalid' ? [{ rule: command.rule }] : [])),
    );
    const isInDoubt = (offset: string) => ownership.inDoubt(partition, offset);
    const reconcilable = (command: Command): command is ValidCommand =>
      command.kind === 'valid' && isReconcilable(command.type, command.id);

    const startedMs = performance.now();
    let intentMs = 0;
    if (commands.some(reconcilable)) {
      // Durable before anything goes out: these offsets may reach the gateway, and the next
      // owner of the partition must know to look them up instead of sending them again.
      // The intent the last commit left may already cover this batch; else one is
      // written now, reaching past the batch so that the next one is likely covered too.
      if (!ownership.covers(partition, lastOffset)) {
        this.#options.onStep?.(partition, 'waiting for earlier commits before its intent');
        if (!(await exclusive())) return 'again';
        this.#options.onStep?.(partition, 'writing its send intent');
        const intent: SendIntent = {
          untilOffset: maxOffset(
            ahead(lastOffset, intentReach(inbound.length)),
            ownership.doubtUntil(partition),
          ),
          atMs: Date.now(),
          by: this.#instanceId,
        };
        const written = await this.#handover.commit(
          batch,
          [],
          firstOffset,
          intent,
          generation,
          assignment,
        );
        if (!written) return 'again';
        ownership.intentWritten(partition, intent.untilOffset);
        intentMs = performance.now() - startedMs;
        this.#options.metrics.stageDuration.observe({ stage: 'intent' }, intentMs / 1000);
      }
    }
    const isCurrent = () =>
      batch.isCurrent() && ownership.generation === generation && this.#leaseHeld();
    // Commands an earlier owner may have sent are looked up together, in few large
    // envelopes, before anything of the batch goes out: those the gateway knows end
    // with their status record; the others are known unsent and go out as usual.
    const doubtful = commands.filter(
      (command): command is ValidCommand =>
        reconcilable(command) &&
        isInDoubt(command.record.offset) &&
        !ownership.hasCarried(partition, command.record.offset),
    );
    const checked = new Map<string, LookupAnswer>();
    if (doubtful.length > 0) {
      this.#options.onStep?.(partition, 'looking up what an earlier owner sent');
      const targets = trace ? trace.lookupTargets(doubtful) : doubtful;
      const answer = await unlessAborted(this.#dispatcher.lookUp(targets), signal);
      if (signal.aborted) return 'again';
      answer?.forEach((known, index) => {
        checked.set((doubtful[index] as ValidCommand).record.offset, known);
      });
    }
    const pending = commands.map((command, index) => {
      const offset = command.record.offset;
      const known = checked.get(offset);
      const span = trace?.span(index);
      if (known) {
        const settled = outcomeOfLookup(known, 1);
        // Not known to the gateway: proven unsent, so it goes out without another lookup.
        return settled ? Promise.resolve(settled) : this.#send(command, false, isCurrent, span);
      }
      const inDoubt = isInDoubt(offset);
      const earlier = ownership.takeCarried(partition, offset);
      if (!earlier) return this.#send(command, inDoubt, isCurrent, span);
      // Handed out by this process in an earlier read of the batch: its answer is the
      // outcome. What was given up goes out now, after a lookup if it may have arrived.
      return earlier.then((outcome) =>
        outcome?.kind === 'abandoned'
          ? this.#send(command, inDoubt || outcome.sent, isCurrent, span)
          : outcome,
      );
    });
    // Everything fetched of the partition is in this batch (what arrives later is the
    // lane's next turn): the envelopes leave without waiting out the linger.
    if (this.#options.stopping()) this.#batcher.flushAll();
    else this.#batcher.inputDrained();
    return { commands, pending, lastOffset, inboundLength: inbound.length, startedMs, intentMs };
  }

  /**
   * Commits answered batches of a partition, oldest first, in one transaction: their
   * results and dead letters, the group offset past the newest, and a send intent.
   * @returns false when they are to be read again (nothing of them is committed then).
   */
  async commit(partition: number, sent: readonly SentBatch[]): Promise<boolean> {
    const oldest = sent[0];
    const newest = sent[sent.length - 1];
    if (!oldest || !newest) return true;
    const ownership = this.#ownership;
    for (const item of sent) {
      // A rebalance started while it was out: read again, its answers taken over then.
      if (item.outcomes === undefined) return false;
      // Answered, but the group has answered since (a batch waits behind earlier ones
      // of its partition): the partition is read again from the group offset, here or
      // by its new owner, and these answers are carried to that read.
      if (!ownership.holds(partition, item.assignment)) return false;
      if (item.outcomes.some((outcome) => outcome?.kind === 'abandoned')) {
        // Requests of the batch may still be on their way through the gateway: it is
        // read again, and its lookups wait until those can have landed.
        ownership.abandoned(partition, this.#options.lookupDelayMs);
        return false;
      }
    }
    const startedMs = performance.now();
    const built = sent.map((item) =>
      buildOutputRecords(
        item.commands,
        (command, index) => this.#resultOf(command, item.outcomes?.[index]),
        {
          topics: this.#options.topics,
          maxBytes: this.#options.recordMaxBytes,
          onInternalError: (command, error) => this.#internalError('output', command.record, error),
          propagateHeaders: this.#options.propagateHeaders ?? [],
          resultPartition: this.#options.resultsPartitioning === 'source' ? partition : undefined,
        },
      ),
    );
    const { lastOffset } = newest;
    const records = built.flatMap((output) => output.records);
    let commands = 0;
    for (const item of sent) commands += item.inboundLength;
    // Offsets past these batches that an earlier owner may have sent stay in doubt; the
    // intent stored with the offset also covers the next batches ahead of time, and it
    // never shrinks: batches behind these may already be out under it.
    const nextIntent: SendIntent = {
      untilOffset: maxOffset(
        maxOffset(
          ahead(lastOffset, intentReach(commands)),
          ownership.doubtBeyond(partition, lastOffset),
        ),
        ownership.coveredUntil(partition),
      ),
      atMs: Date.now(),
      by: this.#instanceId,
    };
    const next = (BigInt(lastOffset) + 1n).toString();
    const committed = await this.#handover.commit(
      newest.batch,
      records,
      next,
      nextIntent,
      oldest.generation,
      oldest.assignment,
    );
    if (!committed) return false;
    ownership.batchCommitted(partition, {
      topic: newest.batch.topic,
      lastOffset,
      intentUntil: nextIntent.untilOffset,
      assignment: oldest.assignment,
    });
    const { stageDuration } = this.#options.metrics;
    const now = performance.now();
    sent.forEach((item, index) => {
      const output = built[index];
      if (!output) return;
      // From the last answer until visible: the wait behind earlier commits included.
      stageDuration.observe({ stage: 'commit' }, (now - item.readyMs) / 1000);
      this.#count(output.results, output.deadLetterReasons);
      this.#commitMetrics.committed(item.commands, output.results);
      item.trace?.committed(output.results);
    });
    this.#log.debug(
      {
        partition,
        batches: sent.length,
        commands,
        commitMs: Math.round(now - startedMs),
      },
      'batches committed',
    );
    return true;
  }

  /** What a batch that did not commit handed out, kept for the batch read again. */
  carry(
    partition: number,
    commands: readonly Command[],
    pending: readonly Promise<SendOutcome | undefined>[],
  ): void {
    this.#ownership.batchCarried(
      partition,
      commands.map((command, index) => [
        command.record.offset,
        pending[index] as Promise<SendOutcome | undefined>,
      ]),
    );
  }

  /** Whether the coordinator confirmed this member recently enough to send (see `leaseMs`). */
  #leaseHeld(): boolean {
    const confirmedAt = this.#options.confirmedAt();
    return Date.now() - confirmedAt < this.#options.leaseMs;
  }

  #send(
    command: Command,
    inDoubt: boolean,
    isCurrent: () => boolean,
    span?: CommandSpan,
  ): Promise<SendOutcome | undefined> {
    if (command.kind === 'invalid') return Promise.resolve(undefined);
    return new Promise((settle) => {
      this.#batcher.add(command.transport, {
        json: command.json,
        id: command.id,
        type: command.type,
        reconcilable: isReconcilable(command.type, command.id),
        inDoubt,
        isCurrent,
        settle,
        span,
      });
    });
  }

  #resultOf(command: Command, outcome: SendOutcome | undefined): Result {
    if (command.kind === 'invalid') return validationResult(command);
    if (!outcome || outcome.kind === 'abandoned') {
      throw new Error('a valid command reached its result without an outcome');
    }
    return sendResult(command as ValidCommand, outcome);
  }

  /** A record ferry failed on: counted and logged; it already has its internal-error result. */
  #internalError(step: 'read' | 'output', record: InboundRecord, error: unknown): void {
    this.#options.metrics.internalErrors.inc({ step });
    this.#log.error(
      {
        step,
        partition: record.partition,
        offset: record.offset,
        err: errorText(error),
      },
      'internal error on a record: it gets an internal-error result and a dead letter',
    );
  }

  #count(results: readonly Result[], deadLetterReasons: readonly string[]): void {
    const { metrics } = this.#options;
    incEach(
      metrics.deadLetters,
      deadLetterReasons.map((reason) => ({ reason })),
    );
    incEach(
      metrics.results,
      results.map((result) => ({
        type: boundedTypeLabel(result.type),
        stage: result.stage,
        success: String(result.success),
      })),
    );
    let parts = 0;
    for (const result of results) if (typeof result.parts === 'number') parts += result.parts;
    if (parts > 0) metrics.partsBilled.inc(parts);
  }
}
