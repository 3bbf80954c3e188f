/**
 * The turn a partition's lane takes when the group assigns it rather than when a batch
 * arrives: its preparation (the takeover, and an intent where commands wait:
 * partition-preparation.ts). It runs as a lane turn (partition-lanes.ts), so no batch of
 * the partition is handled beside it.
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
  /** The partition's batches waiting to commit: settles once none is. */
  readonly commits: { idle(partition: number): Promise<void> };
  /** A partition's preparation for `assignment` ended (readied, or left to its first batch). */
  readonly prepared?: ((partition: number, assignment: number) => void) | undefined;
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
