/**
 * What a batch waits for before its commands are read: a fencing by another replica to
 * lapse, a quiet period after sends given up on, the takeover (fence, then read the group
 * offset and intent) when the partition's preparation at assignment did not do it, and,
 * for the first batch of an assignment, the check that it was fetched from that offset (a
 * fetch sent before a rejoin can arrive after it, from past the group offset: the records
 * between would never be read).
 */
import type { RecordBatch } from '../kafka/kafka-port.ts';
import type { Logger } from '../observability/logger.ts';
import { pause } from './abortable.ts';
import type { PartitionHandover } from './partition-handover.ts';
import type { PartitionOwnership } from './partition-ownership.ts';
import type { PartitionWorkers } from './partition-worker.ts';

export interface ReadyToSendContext {
  readonly ownership: PartitionOwnership;
  readonly handover: PartitionHandover;
  readonly workers: PartitionWorkers;
  readonly logger: Logger;
  readonly onStep?: ((partition: number, step: string) => void) | undefined;
}

const FENCED_RETRY_MS = 500;

/**
 * @returns `go` when the batch may be read and sent; `again` when it is to be read again
 *   (a rebalance, a fencing, a takeover that could not finish); `rewound` when the
 *   partition was rewound to its group offset already.
 */
export async function readyToSend(
  context: ReadyToSendContext,
  batch: RecordBatch,
  assignment: number,
  signal: AbortSignal,
  exclusive: () => Promise<boolean>,
): Promise<'go' | 'again' | 'rewound'> {
  const { ownership } = context;
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
    context.onStep?.(partition, 'waiting for earlier commits before its takeover');
    if (!(await exclusive())) return 'again';
    context.onStep?.(partition, 'taking over');
    const takeover = await context.handover.takeOver(partition, signal, assignment);
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
  }
  // A batch fetched before the rejoin can arrive after it, from past the group offset:
  // the records between would never be read, and this batch's commit would skip them.
  // Only the assignment's first batch is compared (the others continue the one before),
  // whether its takeover ran just now or when the group assigned the partition.
  const first = batch.records[0];
  const check = first
    ? context.workers
        .get(partition)
        .sequence.atTakeover(ownership.floor(partition) ?? 0n, batch.fetchedFrom ?? first.offset)
    : undefined;
  if (check?.kind === 'gap') {
    // Also routine where transaction markers follow the group offset (kafkajs steps over
    // them without a word): the read again then lands where this batch began, and is taken.
    context.logger.info(
      { partition, groupOffset: check.from, fetchedFrom: batch.fetchedFrom ?? first?.offset },
      "a batch was fetched from past the partition's group offset: reading it again from there",
    );
    batch.rewind(check.from);
    return 'rewound';
  }
  return 'go';
}
