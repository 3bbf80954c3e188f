import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { RecordBatch } from '../../src/kafka/kafka-client.ts';
import { createLogger } from '../../src/observability/logger.ts';
import { createMetrics } from '../../src/observability/metrics.ts';
import { BatchProcessor } from '../../src/pipeline/batch-processor.ts';
import type { PartitionHandover } from '../../src/pipeline/partition-handover.ts';
import { PartitionOwnership } from '../../src/pipeline/partition-ownership.ts';

/**
 * The first batch of an assignment after its takeover read the group offset 5: a
 * processor whose takeover always succeeds with that offset, and a batch whose fetch
 * began at `fetchedOffset` (no records: what is handled after the check is not the point).
 */
function afterTakeover(fetchedOffset: string) {
  const ownership = new PartitionOwnership();
  ownership.assigned([2], 'm1');
  const handover = {
    takeOver: async (partition: number, _signal: AbortSignal, assignment: number) => {
      ownership.takenOver(partition, { committed: 5n, intent: undefined, own: false, assignment });
      return 'done';
    },
  } as unknown as PartitionHandover;
  const processor = new BatchProcessor({
    metrics: createMetrics(),
    logger: createLogger({ level: 'silent' }),
    topics: { results: 'results', dlq: 'dlq' },
    recordMaxBytes: 1_000_000,
    lookupDelayMs: 0,
    leaseMs: 10_000,
    ownership,
    handover,
    dispatcher: {},
    batcher: {},
    commitMetrics: {},
    reader: {},
    instanceId: 'me',
    confirmedAt: () => Date.now(),
    stopping: () => false,
  } as unknown as ConstructorParameters<typeof BatchProcessor>[0]);
  const rewinds: (string | undefined)[] = [];
  const batch: RecordBatch = {
    topic: 'commands',
    partition: 2,
    records: [],
    lag: 0,
    fetchedOffset,
    heartbeat: async () => undefined,
    isCurrent: () => true,
    rewind: (offset) => {
      rewinds.push(offset);
    },
  };
  const sent = processor.send(
    batch,
    ownership.generation,
    ownership.assignment,
    ownership.signal,
    async () => true,
  );
  return { sent, rewinds };
}

test('a read that began past the group offset is read again from the group offset', async () => {
  const { sent, rewinds } = afterTakeover('12');
  assert.equal(await sent, 'rewound');
  assert.deepEqual(rewinds, ['5']);
});

test('a read that began at (or before) the group offset goes on', async () => {
  for (const fetchedOffset of ['5', '3']) {
    const { sent, rewinds } = afterTakeover(fetchedOffset);
    assert.equal(await sent, 'done', fetchedOffset);
    assert.deepEqual(rewinds, []);
  }
});
