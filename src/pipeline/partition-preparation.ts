/**
 * A partition readied when the group assigns it, before its first batch arrives: taken
 * over (fenced, its group offset and intent read, its dedupe records restored, another
 * writer's sends waited out) and, when commands are already waiting, given a send intent
 * covering the records ahead. Its first batch then finds no takeover on its path (and,
 * with commands waiting, no intent transaction either), and a replica starting in a
 * rolling deploy has taken its partitions over before it reports ready. Whatever cannot
 * be done now (a fencing held, a takeover that could not finish, the group answering
 * meanwhile) is left to the first batch, which does it as it always did.
 */
import type { PartitionHandover } from './partition-handover.ts';
import type { PartitionOwnership } from './partition-ownership.ts';
import { ahead, intentReach, maxOffset, type SendIntent } from './send-intent.ts';

export interface PreparationContext {
  readonly ownership: PartitionOwnership;
  readonly handover: PartitionHandover;
  /** Names this process in the intents it writes. */
  readonly instanceId: string;
  /** The commands topic whose partitions these are. */
  readonly topic: string;
  /** The pipeline is stopping: no intent is written any more. */
  readonly stopping: () => boolean;
  readonly onStep?: ((partition: number, step: string) => void) | undefined;
}

/** How a preparation ended: `ready` when the partition's first batch can send at once. */
export type Preparation = 'ready' | 'left-to-first-batch';

/**
 * Readies `partition` for `assignment`. Runs as the partition's lane turn, so no batch of
 * the partition is handled meanwhile and none of an earlier assignment is still to commit.
 */
export async function preparePartition(
  context: PreparationContext,
  partition: number,
  generation: number,
  assignment: number,
  signal: AbortSignal,
): Promise<Preparation> {
  const { ownership, handover } = context;
  // A fencing held or a quiet period: the first batch waits them out, as it would.
  if (ownership.fencedState(partition) === 'hold' || ownership.quietFor(partition) > 0) {
    return 'left-to-first-batch';
  }
  if (ownership.needsTakeover(partition)) {
    context.onStep?.(partition, 'taking over ahead of its first batch');
    if ((await handover.takeOver(partition, signal, assignment)) !== 'done') {
      return 'left-to-first-batch';
    }
  }
  if (!ownership.holds(partition, assignment)) return 'left-to-first-batch';
  // What this takeover read, taken now: a group answer during the wait below forgets it,
  // and committing what the next takeover has not read yet could move the offset back.
  const floor = ownership.floor(partition);
  const bounds = await handover.logBounds(partition);
  if (!ownership.holds(partition, assignment) || ownership.needsTakeover(partition)) {
    return 'left-to-first-batch';
  }
  if (bounds === undefined) return 'ready';
  // Reading begins at the group offset, or, for a group that never committed one, at the
  // log's start (ferry's consumers read a new group from the earliest offset).
  const from = floor === undefined ? bounds.start : floor.toString();
  // Nothing waiting: the first batch writes its intent when it comes. An intent written
  // now, under which nothing may ever be sent, would make the partition's next owner
  // wait out and look up sends that never happened.
  if (BigInt(bounds.end) <= BigInt(from)) return 'ready';
  // Stopping: what waits is left to the partition's next owner, with no intent of this
  // replica's in its way.
  if (context.stopping()) return 'left-to-first-batch';
  const reach = intentReach(0);
  // This process's own intent, read back, may cover what is ahead already.
  if (ownership.covers(partition, ahead(from, reach - 1))) return 'ready';
  context.onStep?.(partition, 'writing a send intent ahead of its first batch');
  // The group offset is committed unchanged: only the intent beside it is new.
  const intent: SendIntent = {
    untilOffset: maxOffset(ahead(from, reach), ownership.doubtUntil(partition)),
    atMs: Date.now(),
    by: context.instanceId,
  };
  const written = await handover.commit(
    {
      partition,
      isCurrent: () => ownership.holds(partition, assignment),
      membership: 'current',
    },
    [],
    from,
    intent,
    generation,
    assignment,
  );
  if (!written || !ownership.holds(partition, assignment)) return 'left-to-first-batch';
  ownership.intentWritten(partition, intent.untilOffset, {
    topic: context.topic,
    offset: from,
    assignment,
  });
  return 'ready';
}
