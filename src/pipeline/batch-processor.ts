/**
 * One partition batch from takeover until its results are committed: the handover
 * checks, the send intent, lookups of what an earlier owner may have sent, the sends,
 * and the transaction of results, dead letters and offset. The pipeline decides when a
 * batch runs (lanes, backpressure, lifecycle); this decides what running it does.
 */
import { messageOperationTypes } from '../contract/index.ts';
import type { InboundRecord, RecordBatch } from '../kafka/kafka-port.ts';
import { incEach } from '../observability/tally.ts';
import type { CommandSpan } from '../observability/tracing.ts';
import { unlessAborted } from './abortable.ts';
import { BatchCommitter, type BatchCommitterOptions } from './batch-commit.ts';
import { readyToSend } from './batch-takeover.ts';
import type { BatchTrace } from './batch-trace.ts';
import type { Batcher } from './batcher.ts';
import type { Command, CommandReaderOptions, ValidCommand } from './command.ts';
import { isPast } from './command-deadline.ts';
import type { Dispatcher } from './dispatcher.ts';
import { type InternalErrorStep, internalErrorReporter } from './internal-error.ts';
import { readCommandGuarded } from './last-resort.ts';
import { stampSettled } from './outcome-times.ts';
import type { PartitionHandover } from './partition-handover.ts';
import type { PartitionOwnership } from './partition-ownership.ts';
import { type Preparation, preparePartition } from './partition-preparation.ts';
import type { PartitionWorkers } from './partition-worker.ts';
import { ahead, intentReach, isReconcilable, maxOffset, type SendIntent } from './send-intent.ts';
import {
  type LookupAnswer,
  type Outbound,
  outcomeOfLookup,
  type SendOutcome,
} from './send-outcome.ts';
import type { SendPhase, SentBatch } from './sent-batch.ts';

/** What the commit phase needs (batch-commit.ts), and what the send phase needs besides. */
export interface BatchProcessorOptions extends Omit<BatchCommitterOptions, 'internalError'> {
  /** See PipelineOptions.leaseMs. */
  readonly leaseMs: number;
  /** The topic whose partitions' batches these are. */
  readonly commandsTopic: string;
  /** Each partition's worker: where its batches must continue (see batch-sequence.ts). */
  readonly workers: PartitionWorkers;
  readonly dispatcher: Dispatcher;
  readonly batcher: Batcher<Outbound>;
  readonly reader: CommandReaderOptions;
  /** When the group coordinator last confirmed this member, ms since the epoch (0: never). */
  readonly confirmedAt: () => number;
  /** The pipeline is stopping: partial envelopes go out at once. */
  readonly stopping: () => boolean;
  /** Where a batch's send phase is waiting now (for the stall warning). */
  readonly onStep?: (partition: number, step: string) => void;
}

export class BatchProcessor {
  readonly #options: BatchProcessorOptions;
  readonly #ownership: PartitionOwnership;
  readonly #handover: PartitionHandover;
  readonly #dispatcher: Dispatcher;
  readonly #batcher: Batcher<Outbound>;
  readonly #reader: CommandReaderOptions;
  readonly #instanceId: string;
  readonly #internalError: (step: InternalErrorStep, record: InboundRecord, error: unknown) => void;
  /** The commit phase (batch-commit.ts). */
  readonly #committer: BatchCommitter;

  constructor(options: BatchProcessorOptions) {
    this.#options = options;
    this.#ownership = options.ownership;
    this.#handover = options.handover;
    this.#dispatcher = options.dispatcher;
    this.#batcher = options.batcher;
    this.#reader = options.reader;
    this.#instanceId = options.instanceId;
    this.#internalError = internalErrorReporter(options.metrics, options.logger);
    this.#committer = new BatchCommitter({ ...options, internalError: this.#internalError });
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
    const ready = await readyToSend(this.#options, batch, assignment, signal, exclusive);
    if (ready !== 'go') return ready;
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
    const reachesPerson = (command: Command): boolean =>
      command.kind === 'valid' && messageOperationTypes.has(command.type);

    const startedMs = performance.now();
    let intentMs = 0;
    if (commands.some(reachesPerson)) {
      // Durable before anything goes out: these offsets may reach the gateway, and the next
      // owner of the partition must know to look them up instead of sending them again.
      // Sends without a numeric id cannot be looked up, but the next owner must still know
      // they may have gone out: past their deadline they end in doubt, not `expired`.
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
        // A rebalance began while the intent was written: nothing of the batch went out,
        // so it is left to the rejoin (read again, here or at the next owner).
        if (signal.aborted) return 'again';
        intentMs = performance.now() - startedMs;
        this.#options.metrics.stageDuration.observe({ stage: 'intent' }, intentMs / 1000);
      }
    }
    const isCurrent = () =>
      batch.isCurrent() && ownership.sendsContinue(generation, assignment) && this.#leaseHeld();
    // Commands an earlier owner may have sent are looked up together, in few large
    // envelopes, before anything of the batch goes out: those the gateway knows end
    // with their status record; the others are known unsent and go out as usual.
    const dedupe = this.#options.dedupe;
    const doubtful = commands.filter(
      (command): command is ValidCommand =>
        reconcilable(command) &&
        isInDoubt(command.record.offset) &&
        !ownership.hasCarried(partition, command.record.offset) &&
        !dedupe?.handledBefore(partition, command),
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
      const span = trace?.span(index);
      const trip = (): Promise<SendOutcome | undefined> => {
        const known = checked.get(offset);
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
      };
      // A copy of an id handled before, or on its way, is answered, not sent.
      const outcome =
        dedupe && command.kind === 'valid' ? dedupe.outcomeOf(partition, command, trip) : trip();
      return outcome.then(stampSettled);
    });
    // Everything fetched of the partition is in this batch (what arrives later is the
    // lane's next turn): the envelopes leave without waiting out the linger.
    if (this.#options.stopping()) this.#batcher.flushAll();
    else this.#batcher.inputDrained();
    return { commands, pending, lastOffset, inboundLength: inbound.length, startedMs, intentMs };
  }

  /** Readies a partition the group just assigned (see partition-preparation.ts). */
  prepare(
    partition: number,
    generation: number,
    assignment: number,
    signal: AbortSignal,
  ): Promise<Preparation> {
    return preparePartition(
      {
        ownership: this.#ownership,
        handover: this.#handover,
        instanceId: this.#instanceId,
        topic: this.#options.commandsTopic,
        stopping: this.#options.stopping,
        onStep: this.#options.onStep,
      },
      partition,
      generation,
      assignment,
      signal,
    );
  }

  /** See BatchCommitter.commit. */
  commit(partition: number, sent: readonly SentBatch[]): Promise<boolean> {
    return this.#committer.commit(partition, sent);
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
    const deadlineMs = command.deadline?.atMs;
    // Its turn came too late: it never goes out. One that may have arrived earlier goes
    // to the dispatcher all the same, which looks it up before deciding.
    if (!inDoubt && isPast(deadlineMs, Date.now())) {
      return Promise.resolve({ kind: 'expired', deadlineMs: deadlineMs as number, attempts: 0 });
    }
    return new Promise((settle) => {
      this.#batcher.add(command.transport, {
        json: command.json,
        id: command.id,
        type: command.type,
        reconcilable: isReconcilable(command.type, command.id),
        inDoubt,
        deadlineMs,
        isCurrent,
        settle,
        span,
      });
    });
  }
}
