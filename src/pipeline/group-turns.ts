/**
 * The turns a partition's lane takes when the group acts rather than when a batch
 * arrives: its preparation when the group assigns it (the takeover, and an intent where
 * commands wait: partition-preparation.ts), and letting it go when a rebalance begins
 * (this replica's intent cleared when nothing of the partition is in flight). Each runs
 * as a lane turn (partition-lanes.ts), so no batch of the partition is handled beside it.
 */
import type { Logger } from '../observability/logger.ts';
import type { BatchProcessor } from './batch-processor.ts';
import { errorText } from './output-records.ts';
import type { PartitionOwnership } from './partition-ownership.ts';
import type { PartitionWorkers } from './partition-worker.ts';

export interface GroupTurnsContext {
  readonly processor: Pick<BatchProcessor, 'prepare'>;
  readonly ownership: PartitionOwnership;
  /** Each partition's worker: where its turn in progress is (`step`). */
  readonly workers: PartitionWorkers;
  readonly logger: Logger;
  /** The pipeline is stopping: nothing more is begun. */
  readonly stopping: () => boolean;
  /** The partition's batches waiting to commit: settles once none is; `busy` while any is. */
  readonly commits: {
    idle(partition: number): Promise<void>;
    busy(partition: number): boolean;
  };
  /** A partition's preparation for `assignment` ended (readied, or left to its first batch). */
  readonly prepared?: ((partition: number, assignment: number) => void) | undefined;
  /**
   * Clears this replica's intent from the partition's group offset `offset` (see
   * PartitionHandover.clearIntent); unset, nothing is let go at a rebalance.
   */
  readonly clearIntent?:
    | ((partition: number, topic: string, offset: string) => Promise<boolean>)
    | undefined;
}

/**
 * A partition's preparation, as its lane's turn: after the earlier assignment's batches
 * of the partition committed or failed (the takeover renews the producer they commit
 * with), before any batch of this one. Never rejects: what it could not do, the first
 * batch does.
 */
export async function prepareTurn(context: GroupTurnsContext, partition: number): Promise<void> {
  const { ownership, processor } = context;
  const assignment = ownership.assignment;
  const generation = ownership.generation;
  const signal = ownership.signal;
  const worker = context.workers.get(partition);
  try {
    if (context.stopping() || !ownership.holds(partition, assignment)) return;
    worker.step = 'preparing: waiting for earlier commits';
    await context.commits.idle(partition);
    if (context.stopping() || !ownership.holds(partition, assignment)) return;
    await processor.prepare(partition, generation, assignment, signal);
  } catch (error: unknown) {
    context.logger.warn(
      { partition, err: errorText(error) },
      'readying the partition failed: its first batch takes it over',
    );
  } finally {
    worker.step = `prepared for assignment ${assignment}`;
    context.prepared?.(partition, assignment);
  }
}

/**
 * Lets an idle partition go, as its lane's turn: when no batch of it is waiting to
 * commit and nothing of it is unsettled, its intent is cleared (the group offset
 * committed again as it is, without it). A batch handled after this writes a new intent
 * before it sends. Never rejects.
 */
export async function releaseTurn(context: GroupTurnsContext, partition: number): Promise<void> {
  const { ownership, clearIntent } = context;
  if (!clearIntent || context.stopping() || context.commits.busy(partition)) return;
  const target = ownership.releasableOne(partition);
  if (!target) return;
  const worker = context.workers.get(partition);
  worker.step = 'rebalancing: clearing its send intent';
  try {
    const cleared = await clearIntent(partition, target.topic, target.offset);
    worker.step = cleared ? 'rebalancing: its send intent cleared' : 'rebalancing';
    if (cleared) {
      context.logger.debug(
        { partition, offset: target.offset },
        'rebalance: nothing of the partition in flight here; its send intent is cleared',
      );
    }
  } catch (error: unknown) {
    context.logger.debug({ partition, err: errorText(error) }, 'letting the partition go failed');
  }
}
