/**
 * The commit of a partition's answered batches, oldest first, in one transaction: their
 * results and dead letters, the dedupe records of the ids that reached the gateway, the
 * group offset past the newest, and the send intent that covers the next batches ahead
 * of time. Batches answered after the group answered again,
 * or with sends given up on, are not committed: they are read again.
 */

import type { InboundRecord } from '../kafka/kafka-port.ts';
import type { Logger } from '../observability/logger.ts';
import { boundedTypeLabel, type FerryMetrics } from '../observability/metrics.ts';
import { incEach } from '../observability/tally.ts';
import { sentMessagesOf } from '../tracking/sent-messages.ts';
import { sentRecord } from '../tracking/tracking-records.ts';
import type { Command, ValidCommand } from './command.ts';
import type { CommitMetrics } from './commit-metrics.ts';
import type { Dedupe } from './dedupe.ts';
import type { InternalErrorStep } from './internal-error.ts';
import { buildOutputRecords } from './output-records.ts';
import type { PartitionHandover } from './partition-handover.ts';
import type { PartitionOwnership } from './partition-ownership.ts';
import { type Result, sendResult, validationResult } from './result.ts';
import { ahead, intentReach, maxOffset, type SendIntent } from './send-intent.ts';
import type { SendOutcome } from './send-outcome.ts';
import type { SentBatch } from './sent-batch.ts';

export interface BatchCommitterOptions {
  readonly metrics: FerryMetrics;
  readonly logger: Logger;
  readonly topics: { readonly results: string; readonly dlq: string };
  readonly recordMaxBytes: number;
  readonly propagateHeaders?: readonly string[] | undefined;
  /** `source`: each result in its command's partition number, not its key's hash. */
  readonly resultsPartitioning?: 'key' | 'source' | undefined;
  /** See PipelineOptions.lookupDelayMs. */
  readonly lookupDelayMs: number;
  readonly ownership: PartitionOwnership;
  readonly handover: PartitionHandover;
  readonly commitMetrics: CommitMetrics;
  /** Names this process in the send intents it writes. */
  readonly instanceId: string;
  readonly internalError: (step: InternalErrorStep, record: InboundRecord, error: unknown) => void;
  /** Duplicate suppression, when on: its records join each result transaction. */
  readonly dedupe?: Dedupe | undefined;
  /**
   * Final status tracking, when on: the tracking record of each message sent joins the
   * transaction of its result; `onCommitted` hears how many a commit wrote, at once (the
   * tracker reads them back only on its next round, and bounds what awaits a status).
   */
  readonly tracking?:
    | {
        readonly topic: string;
        readonly onCommitted?: (partition: number, messages: number) => void;
      }
    | undefined;
}

export class BatchCommitter {
  readonly #options: BatchCommitterOptions;
  readonly #log: Logger;
  readonly #ownership: PartitionOwnership;
  readonly #handover: PartitionHandover;
  readonly #commitMetrics: CommitMetrics;
  readonly #instanceId: string;

  constructor(options: BatchCommitterOptions) {
    this.#options = options;
    this.#log = options.logger;
    this.#ownership = options.ownership;
    this.#handover = options.handover;
    this.#commitMetrics = options.commitMetrics;
    this.#instanceId = options.instanceId;
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
        // Read again. Should requests of the batch still be on their way through the
        // gateway, its lookups wait until those can have landed; what was given up
        // before it left needs no wait.
        if (item.outcomes.some((outcome) => outcome?.kind === 'abandoned' && outcome.sent)) {
          ownership.abandoned(partition, this.#options.lookupDelayMs);
        }
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
          onInternalError: (command, error) =>
            this.#options.internalError('output', command.record, error),
          propagateHeaders: this.#options.propagateHeaders ?? [],
          resultPartition: this.#options.resultsPartitioning === 'source' ? partition : undefined,
        },
      ),
    );
    const { lastOffset } = newest;
    const records = built.flatMap((output) => output.records);
    const dedupe = this.#options.dedupe?.recordsOf(
      partition,
      sent.flatMap((item, batchIndex) =>
        item.commands.flatMap((command, index) =>
          command.kind === 'valid'
            ? [
                {
                  command,
                  outcome: item.outcomes?.[index],
                  completedAt:
                    built[batchIndex]?.results[index]?.completed_at ?? new Date().toISOString(),
                },
              ]
            : [],
        ),
      ),
    );
    if (dedupe) records.push(...dedupe.records);
    const tracking = this.#options.tracking;
    let tracked = 0;
    if (tracking) {
      sent.forEach((item, index) => {
        for (const message of sentMessagesOf(item.commands, built[index]?.results ?? [])) {
          records.push(sentRecord(tracking.topic, partition, message));
          tracked += 1;
        }
      });
    }
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
    dedupe?.committed();
    if (tracked > 0) tracking?.onCommitted?.(partition, tracked);
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

  #resultOf(command: Command, outcome: SendOutcome | undefined): Result {
    if (command.kind === 'invalid') return validationResult(command);
    if (!outcome || outcome.kind === 'abandoned') {
      throw new Error('a valid command reached its result without an outcome');
    }
    return sendResult(command as ValidCommand, outcome);
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
    incEach(
      metrics.commandsExpired,
      results.flatMap((result) =>
        result.code === 'expired' ? [{ type: boundedTypeLabel(result.type) }] : [],
      ),
    );
    let parts = 0;
    for (const result of results) if (typeof result.parts === 'number') parts += result.parts;
    if (parts > 0) metrics.partsBilled.inc(parts);
  }
}
