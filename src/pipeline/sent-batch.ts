/**
 * A partition batch whose commands were handed out, waiting for their outcomes and for
 * its turn to commit (see ordered-commits.ts).
 */
import type { RecordBatch } from '../kafka/kafka-port.ts';
import { unlessAborted } from './abortable.ts';
import type { BatchTrace } from './batch-trace.ts';
import type { Command } from './command.ts';
import type { Committable } from './ordered-commits.ts';
import type { SendOutcome } from './send-outcome.ts';

/** What the send phase of a batch produced. */
export interface SendPhase {
  readonly commands: readonly Command[];
  /** Per command, its outcome (undefined for an invalid command). */
  readonly pending: readonly Promise<SendOutcome | undefined>[];
  /** Offset of the batch's last record handled (past an earlier owner's commit). */
  readonly lastOffset: string;
  readonly inboundLength: number;
  /** performance.now() when the send phase began, and ms its intent transaction took. */
  readonly startedMs: number;
  readonly intentMs: number;
}

export interface SentBatch extends SendPhase, Committable {
  readonly batch: RecordBatch;
  /** The group generation and assignment it was sent in. */
  readonly generation: number;
  readonly assignment: number;
  readonly trace: BatchTrace | undefined;
  /** The outcomes, once ready; undefined when a rebalance began first. */
  readonly outcomes: readonly (SendOutcome | undefined)[] | undefined;
  /** performance.now() when every outcome was known. */
  readonly readyMs: number;
  /** Releases what the batch held (heartbeat, trace, backpressure count); once. */
  finish(): void;
}

export interface SentBatchContext {
  readonly generation: number;
  readonly assignment: number;
  /**
   * Aborted when the group answers after the batch was handed out: the batch stops
   * waiting for its outcomes. A rebalance only started leaves the partition here until
   * then, so answers arriving meanwhile are still committed (and the partition's next
   * owner, should it move, finds them committed instead of waiting out their sends).
   */
  readonly signal: AbortSignal;
  readonly trace: BatchTrace | undefined;
  readonly finish: () => void;
  /** Called once every outcome is known, with ms from the send phase's start. */
  readonly onReady?: (sendMs: number) => void;
}

export function sentBatch(
  batch: RecordBatch,
  phase: SendPhase,
  context: SentBatchContext,
): SentBatch {
  let outcomes: readonly (SendOutcome | undefined)[] | undefined;
  let readyMs = 0;
  let isReady = false;
  let finished = false;
  const ready = unlessAborted(Promise.all(phase.pending), context.signal)
    // Outcomes never reject; should one, the batch is read again like after a rebalance.
    .catch(() => undefined)
    .then((settled) => {
      outcomes = settled;
      readyMs = performance.now();
      isReady = true;
      if (settled) context.onReady?.(readyMs - phase.startedMs - phase.intentMs);
    });
  return {
    ...phase,
    batch,
    generation: context.generation,
    assignment: context.assignment,
    trace: context.trace,
    ready,
    isReady: () => isReady,
    get outcomes() {
      return outcomes;
    },
    get readyMs() {
      return readyMs;
    },
    finish: () => {
      if (finished) return;
      finished = true;
      context.finish();
    },
  };
}

/**
 * Whether every command of an answered batch has its outcome: not a batch a rebalance
 * began before it was answered, nor one with sends given up (both are read again).
 */
export function answeredInFull(batch: SentBatch): boolean {
  const { outcomes } = batch;
  return outcomes !== undefined && !outcomes.some((outcome) => outcome?.kind === 'abandoned');
}
