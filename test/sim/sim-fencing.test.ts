/**
 * The simulator's group coordinator fences offsets by membership as Kafka's does
 * (TxnOffsetCommit v3, what `generation-fenced-commits.test.ts` shows against the real
 * broker): a simulated producer given a membership source commits with the current
 * generation, and is refused for an older one, for a member the group does not know and
 * for a member that left; a refused transaction makes nothing visible.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { GroupConsumer, GroupMembership } from '../../src/kafka/kafka-port.ts';
import { eventually } from '../helpers/fleet.ts';
import { ReplicaLink } from './replica-link.ts';
import { SimBroker } from './sim-broker.ts';
import { ILLEGAL_GENERATION_ERROR, SimGroup, UNKNOWN_MEMBER_ERROR } from './sim-group.ts';
import { SimKafkaPort } from './sim-kafka-port.ts';
import { SimRandom } from './sim-random.ts';

const TOPIC = 'commands';
const GROUP = 'group';

test('offsets fenced by membership: the current generation commits; an older one, an unknown member and a member that left do not', async (t) => {
  const random = new SimRandom(42);
  const broker = new SimBroker(random.fork(), 2, { markerDelayMaxMs: 5, coordinatorLoadMaxMs: 5 });
  const group = new SimGroup(broker, 3_000);
  t.after(() => group.stop());
  const faults = { unknownOutcomeRate: 0, lateFetchRate: 0, maxBatchRecords: 10 };
  const port = (name: string) =>
    new SimKafkaPort(new ReplicaLink(name), broker, group, random.fork(), faults, () => undefined);
  const consumer = (name: string): GroupConsumer => {
    const member = port(name).createBatchConsumer({
      groupId: GROUP,
      topic: TOPIC,
      sessionTimeoutMs: 3_000,
      fetchMaxWaitMs: 20,
      onBatch: () => undefined,
    });
    t.after(() => member.stop());
    return member;
  };
  const offsets = (offset: string) => [{ topic: TOPIC, partition: 0, offset }];
  const record = (value: string) => [{ topic: 'results', key: value, value }];

  const a = consumer('a');
  await a.start();
  const first = a.membership;
  assert.ok(first, 'a member whose join completed has a membership');

  const ports = port('a');
  const live = ports.createTransactionalProducer('live', { fencedBy: () => a.membership });
  await live.connect();
  await live.commit(record('live-1'), GROUP, offsets('1'));
  await eventually(
    'the first commit is visible',
    async () => (broker.committed(0)?.offset === '1' ? true : undefined),
    10_000,
  );

  // A second member: a rebalance, after which member a holds the next generation.
  const stale: GroupMembership = first;
  const b = consumer('b');
  await b.start();
  await eventually(
    'member a joined the next generation',
    async () => ((a.membership?.generationId ?? 0) > stale.generationId ? true : undefined),
    10_000,
  );

  const zombie = ports.createTransactionalProducer('zombie', { fencedBy: () => stale });
  await zombie.connect();
  await assert.rejects(zombie.commit(record('stale'), GROUP, offsets('2')), {
    message: ILLEGAL_GENERATION_ERROR,
  });

  await live.commit(record('live-2'), GROUP, offsets('3'));
  await eventually(
    'the live commit is visible',
    async () => (broker.committed(0)?.offset === '3' ? true : undefined),
    10_000,
  );

  const stranger = ports.createTransactionalProducer('stranger', {
    fencedBy: () => ({
      memberId: 'nobody',
      generationId: stale.generationId + 1,
      groupInstanceId: null,
    }),
  });
  await stranger.connect();
  await assert.rejects(stranger.commit(record('stranger'), GROUP, offsets('4')), {
    message: UNKNOWN_MEMBER_ERROR,
  });

  // Member a leaves: it has no membership, and its offsets are refused.
  await a.stop();
  assert.equal(a.membership, undefined);
  await assert.rejects(live.commit(record('left'), GROUP, offsets('5')), {
    message: UNKNOWN_MEMBER_ERROR,
  });

  await sleep(50);
  assert.equal(broker.committed(0)?.offset, '3', 'no refused transaction moved the offset');
  assert.deepEqual(
    broker.visible.map((r) => r.value),
    ['live-1', 'live-2'],
    'no refused transaction made a record visible',
  );
});
