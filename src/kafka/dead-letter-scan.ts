/**
 * Reads a range of the dead-letter topic for the replay (dead-letter-reader.ts): from
 * where the replay stands on each partition up to the end offsets it was given, at
 * read_committed, handing each record to the replay's visitor until it says stop. The
 * reading is done by a throwaway consumer group, positioned with `setOffsets` before it
 * joins so that its first fetch starts where the replay stands, and deleted afterwards.
 * Batches of only transaction markers or aborted records never reach kafkajs's batch
 * handler, so the position also moves on kafkajs's end-of-batch event; a scan that makes
 * no progress for a while, or whose signal aborts, ends with an error.
 */
import { randomUUID } from 'node:crypto';
import type { DeadLetter, ScanVerdict } from '../admin/dead-letter-replay.ts';
import { FerryError } from '../errors.ts';
import { kafkaError } from './kafka-security.ts';
import type { Admin, Kafka } from './kafkajs.ts';
import { headersOf } from './kafkajs-adapters.ts';

/** What a scan reads with and where. */
export interface DeadLetterScanSource {
  readonly kafka: Kafka;
  /** The reader's admin client, connected on first use. */
  readonly admin: () => Promise<Admin>;
  /** The dead-letter topic. */
  readonly topic: string;
  /** The replay's progress group: the throwaway reader groups are named under it. */
  readonly progressGroupId: string;
  /** Gives up a scan that makes no progress for this long. */
  readonly idleTimeoutMs: number;
}

/**
 * Reads each partition from `from` up to `to` (exclusive), calling `visit` with each
 * record in partition order. @returns the position reached on each partition.
 * @throws FerryError `kafka` when reading fails or stalls, `aborted` when `signal` aborts.
 */
export async function scanDeadLetters(
  source: DeadLetterScanSource,
  from: ReadonlyMap<number, number>,
  to: ReadonlyMap<number, number>,
  visit: (record: DeadLetter) => ScanVerdict,
  signal?: AbortSignal,
): Promise<Map<number, number>> {
  const { topic } = source;
  const position = new Map(from);
  const pending = () =>
    [...to].filter(([partition, end]) => (position.get(partition) ?? 0) < end).length;
  if (pending() === 0) return position;

  const groupId = `${source.progressGroupId}.reader.${randomUUID()}`;
  const admin = await source.admin();
  try {
    // Positioned before it joins, so the first fetch starts where replay stands.
    await admin.setOffsets({
      groupId,
      topic,
      partitions: [...from].map(([partition, offset]) => ({ partition, offset: String(offset) })),
    });
  } catch (error: unknown) {
    throw kafkaError(error, 'positioning the dead-letter reader failed');
  }
  const consumer = source.kafka.consumer({
    groupId,
    readUncommitted: false,
    maxWaitTimeInMs: 200,
  });
  let stopped = false;
  let settle: ((error?: Error) => void) | undefined;
  const finished = new Promise<void>((resolve, reject) => {
    settle = (error) => (error ? reject(error) : resolve());
  });
  // Awaited below; settling before that point must not count as an unhandled rejection.
  finished.catch(() => undefined);
  let idleTimer: NodeJS.Timeout | undefined;
  const idleMs = source.idleTimeoutMs;
  const touch = () => {
    if (idleTimer) clearTimeout(idleTimer);
    idleTimer = setTimeout(
      () => settle?.(new FerryError('kafka', 'the dead-letter scan made no progress')),
      idleMs,
    );
  };
  const finish = () => {
    if (!stopped && pending() === 0) {
      stopped = true;
      settle?.();
    }
  };
  const onAbort = () => {
    stopped = true;
    settle?.(new FerryError('aborted', 'the dead-letter replay was aborted'));
  };
  signal?.addEventListener('abort', onAbort, { once: true });
  // Batches of only transaction markers or aborted records never reach eachBatch.
  consumer.on(consumer.events.END_BATCH_PROCESS, (event) => {
    const { partition, lastOffset } = event.payload;
    if (stopped || event.payload.topic !== topic) return;
    const next = Number(lastOffset) + 1;
    const end = to.get(partition) ?? 0;
    if (next > (position.get(partition) ?? 0)) position.set(partition, Math.min(next, end));
    touch();
    finish();
  });
  try {
    touch();
    await consumer.connect();
    await consumer.subscribe({ topics: [topic], fromBeginning: true });
    await consumer.run({
      autoCommit: false,
      eachBatch: async ({ batch }) => {
        for (const message of batch.messages) {
          if (stopped) return;
          const partition = batch.partition;
          const offset = Number(message.offset);
          const end = to.get(partition) ?? 0;
          if (offset < (position.get(partition) ?? 0) || offset >= end) continue;
          const verdict = visit({
            partition,
            offset,
            timestamp: Number(message.timestamp),
            key: message.key,
            value: message.value,
            headers: headersOf(message.headers),
          });
          if (verdict === 'stop') {
            stopped = true;
            settle?.();
            return;
          }
          position.set(partition, offset + 1);
        }
        touch();
        finish();
      },
    });
    await finished;
    return position;
  } catch (error: unknown) {
    throw kafkaError(error, 'reading the dead-letter topic failed');
  } finally {
    stopped = true;
    if (idleTimer) clearTimeout(idleTimer);
    signal?.removeEventListener('abort', onAbort);
    await consumer.disconnect().catch(() => undefined);
    await admin.deleteGroups([groupId]).catch(() => undefined);
  }
}
