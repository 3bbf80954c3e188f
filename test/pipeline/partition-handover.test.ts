import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { KafkaClient } from '../../src/kafka/kafka-client.ts';
import { createLogger } from '../../src/observability/logger.ts';
import { PartitionHandover } from '../../src/pipeline/partition-handover.ts';
import { PartitionOwnership } from '../../src/pipeline/partition-ownership.ts';
import type { PartitionTransactions } from '../../src/pipeline/partition-transactions.ts';

test('a takeover the group answered during learns nothing: the new assignment takes the partition over itself', async () => {
  const ownership = new PartitionOwnership();
  ownership.assigned([3], 'm1');
  let initialised: () => void = () => undefined;
  const transactions = {
    // Initialising the producer waits for the id's last transaction (seconds after a broker restart).
    renew: () =>
      new Promise<void>((done) => {
        initialised = done;
      }),
    committed: async () => ({ topic: 'commands', partition: 3, offset: '0', metadata: null }),
  } as unknown as PartitionTransactions;
  const handover = new PartitionHandover({
    kafka: { isStableMember: async () => true } as unknown as KafkaClient,
    groupId: 'g',
    transactions,
    ownership,
    logger: createLogger({ level: 'silent' }),
    instanceId: 'me',
    memberId: () => 'm1',
    inDoubtSettleMs: 0,
    fencedHoldMs: 1_000,
  });
  const takeover = handover.takeOver(3, ownership.signal, ownership.assignment);
  await new Promise((resolve) => setImmediate(resolve));
  ownership.rebalanceStarted();
  ownership.assigned([3], 'm1');
  initialised();
  assert.equal(await takeover, 'rebalancing');
  assert.equal(ownership.needsTakeover(3), true);

  // Begun and finished in the same assignment, it counts.
  const again = handover.takeOver(3, ownership.signal, ownership.assignment);
  await new Promise((resolve) => setImmediate(resolve));
  initialised();
  assert.equal(await again, 'done');
  assert.equal(ownership.needsTakeover(3), false);

  // A batch of an earlier assignment does not begin a takeover at all.
  const earlier = ownership.assignment;
  ownership.assigned([3], 'm1');
  assert.equal(await handover.takeOver(3, ownership.signal, earlier), 'rebalancing');
  assert.equal(ownership.needsTakeover(3), true);
});
