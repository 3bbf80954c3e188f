/**
 * The simulator's OffsetFetch with require_stable answers as Kafka's does (what
 * `stable-offsets.test.ts` shows against the real broker): a partition whose offset an open
 * transaction holds is unstable until that transaction's markers are written, or until it
 * is aborted, by a new holder of its transactional id or by the broker at the transaction
 * timeout, after which the late EndTxn of its producer is refused as fenced.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { ReplicaLink } from './replica-link.ts';
import { FENCED_ERROR, SimBroker } from './sim-broker.ts';
import { SimGroup } from './sim-group.ts';
import { SimKafkaPort } from './sim-kafka-port.ts';
import { SimRandom } from './sim-random.ts';

const TOPIC = 'commands';
const GROUP = 'group';
const TRANSACTION_TIMEOUT_MS = 400;

function world(t: { after(fn: () => void): void }) {
  const random = new SimRandom(7);
  const broker = new SimBroker(random.fork(), 2, {
    markerDelayMaxMs: 30,
    coordinatorLoadMaxMs: 0,
    transactionTimeoutMs: TRANSACTION_TIMEOUT_MS,
  });
  const group = new SimGroup(broker, 3_000);
  t.after(() => group.stop());
  const faults = { unknownOutcomeRate: 0, lateFetchRate: 0, maxBatchRecords: 10 };
  const port = (link: ReplicaLink) =>
    new SimKafkaPort(link, broker, group, random.fork(), faults, () => undefined);
  return { broker, port };
}

const offsets = (offset: string) => [
  { topic: TOPIC, partition: 0, offset, metadata: `m${offset}` },
];
const records = (value: string) => [{ topic: 'results', key: value, value }];

/** Freezes `link` the moment `broker` opens a transaction: its producer is held right after adding its offsets. */
function freezeWhenOpened(broker: SimBroker, link: ReplicaLink): void {
  const open = broker.openTransaction.bind(broker);
  broker.openTransaction = (...args) => {
    open(...args);
    link.freeze();
    broker.openTransaction = open;
  };
}

/** Resolves true once `promise` settles within `ms`, false when it is still pending. */
async function settlesWithin(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let settled = false;
  promise.then(
    () => {
      settled = true;
    },
    () => {
      settled = true;
    },
  );
  await sleep(ms);
  return settled;
}

test('a partition held by a transaction is unstable until the transaction ends, then reads its offset', async (t) => {
  const { broker, port } = world(t);
  const owner = new ReplicaLink('owner');
  const producer = port(owner).createTransactionalProducer('owner-lane');
  await producer.connect();
  await producer.commit(records('1'), GROUP, offsets('1'));
  const reader = port(new ReplicaLink('reader'));
  await assert.doesNotReject(async () => {
    const read = await reader.stableOffsets(GROUP, TOPIC, [0, 1], 2_000);
    assert.deepEqual(read.get(0), { topic: TOPIC, partition: 0, offset: '1', metadata: 'm1' });
    assert.equal(read.get(1)?.offset, '-1', 'a partition never committed');
  });

  // The owner freezes inside its next transaction, after its offsets were added.
  freezeWhenOpened(broker, owner);
  const commit = producer.commit(records('2'), GROUP, offsets('2'));
  await sleep(10);
  assert.equal(owner.health, 'frozen');
  assert.equal(broker.committed(0)?.offset, '1', 'without require_stable: the last committed');
  const reading = reader.stableOffsets(GROUP, TOPIC, [0], 5_000);
  assert.equal(await settlesWithin(reading, 100), false, 'held while the transaction is open');

  owner.thaw();
  await commit;
  const read = await reading;
  assert.equal(
    read.get(0)?.offset,
    '2',
    'read once the transaction ended and its markers were written',
  );
});

test('a transaction whose producer stays frozen holds the partition until the broker aborts it; its late EndTxn is fenced', async (t) => {
  const { broker, port } = world(t);
  const owner = new ReplicaLink('owner');
  const producer = port(owner).createTransactionalProducer('owner-lane');
  await producer.connect();
  await producer.commit(records('1'), GROUP, offsets('1'));
  await port(new ReplicaLink('wait')).stableOffsets(GROUP, TOPIC, [0], 2_000);

  freezeWhenOpened(broker, owner);
  const commit = producer.commit(records('2'), GROUP, offsets('2'));
  commit.catch(() => undefined);
  await sleep(10);
  assert.equal(owner.health, 'frozen');
  const reader = port(new ReplicaLink('reader'));
  await assert.rejects(
    reader.stableOffsets(GROUP, TOPIC, [0], 100),
    /still held by an open transaction/,
  );

  await sleep(TRANSACTION_TIMEOUT_MS);
  const read = await reader.stableOffsets(GROUP, TOPIC, [0], 1_000);
  assert.equal(read.get(0)?.offset, '1', 'aborted at the timeout: the offset before it');

  owner.thaw();
  await assert.rejects(commit, { message: FENCED_ERROR });
  await sleep(100);
  assert.equal(broker.committed(0)?.offset, '1', 'nothing of the aborted transaction committed');
  assert.ok(!broker.visible.some((r) => r.value === '2'), 'its record never visible');
});

test('a new holder of the transactional id aborts the open transaction at once', async (t) => {
  const { broker, port } = world(t);
  const owner = new ReplicaLink('owner');
  const producer = port(owner).createTransactionalProducer('partition-0');
  await producer.connect();
  freezeWhenOpened(broker, owner);
  const commit = producer.commit(records('1'), GROUP, offsets('1'));
  commit.catch(() => undefined);
  await sleep(10);
  assert.equal(owner.health, 'frozen');
  const next = port(new ReplicaLink('next'));
  const reading = next.stableOffsets(GROUP, TOPIC, [0], 5_000);
  assert.equal(await settlesWithin(reading, 50), false, 'held while the transaction is open');

  await next.createTransactionalProducer('partition-0').connect();
  const read = await reading;
  assert.equal(read.get(0)?.offset, '-1', 'the aborted transaction committed nothing');
  owner.thaw();
  await assert.rejects(commit, { message: FENCED_ERROR });
});
