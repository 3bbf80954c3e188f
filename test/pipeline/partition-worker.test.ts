import assert from 'node:assert/strict';
import { test } from 'node:test';
import { GroupLease } from '../../src/pipeline/group-lease.ts';
import { PartitionFacts } from '../../src/pipeline/partition-facts.ts';
import { PartitionWorker, PartitionWorkers } from '../../src/pipeline/partition-worker.ts';

const intent = (untilOffset: string, by = 'other') => ({ untilOffset, atMs: 1, by });

test('GroupLease: assigned counts answers, holds only the current one on owned partitions', () => {
  const lease = new GroupLease();
  assert.deepEqual(lease.assigned([0, 2], 'm1'), { rejoined: false });
  const first = lease.assignment;
  assert.equal(lease.holds(0, first), true);
  assert.equal(lease.holds(1, first), false);
  assert.deepEqual(lease.assigned([0], 'm2'), { rejoined: true });
  assert.equal(lease.holds(0, first), false, 'work of an earlier assignment');
  assert.equal(lease.owns(2), false);
});

test('GroupLease: rebalanceStarted aborts the work of the generation before', () => {
  const lease = new GroupLease();
  const signal = lease.signal;
  lease.rebalanceStarted();
  assert.equal(signal.aborted, true);
  assert.equal(lease.generation, 1);
  assert.equal(lease.signal.aborted, false);
});

test('PartitionFacts: takenOver by another writer puts its range in doubt until committed past it', () => {
  const facts = new PartitionFacts();
  facts.takenOver({ committed: 10n, intent: intent('20'), own: false, assignment: 1 });
  assert.equal(facts.needsTakeover(), false);
  assert.equal(facts.inDoubt('15'), true);
  assert.equal(facts.covers('15'), false, "another writer's intent covers nothing of ours");
  facts.batchCommitted({ topic: 't', lastOffset: '20', intentUntil: '40', assignment: 1 });
  assert.equal(facts.inDoubt('15'), false);
  assert.equal(facts.covers('40'), true);
});

test('PartitionFacts: reassigned reads the group again; a fencing holds the partition for a while', () => {
  const facts = new PartitionFacts();
  facts.takenOver({ committed: 0n, intent: undefined, own: false, assignment: 1 });
  facts.batchCommitted({ topic: 't', lastOffset: '4', intentUntil: '9', assignment: 1 });
  facts.reassigned(true);
  assert.equal(facts.needsTakeover(), true);
  assert.equal(facts.readBehind(3n), true, 'kept under the same member: its own commit counts');
  facts.reassigned(false);
  assert.equal(facts.readBehind(3n), false, 'given away or rejoined: it does not');
  facts.fenced(1_000, true, 0);
  assert.equal(facts.fencedState(500), 'hold');
  assert.equal(facts.fencedState(1_000), 'free');
  assert.equal(facts.needsTakeover(), true);
});

test('PartitionFacts: carried outcomes are taken once, and dropped by another writer after them', async () => {
  const facts = new PartitionFacts();
  const outcome = Promise.resolve(undefined);
  facts.batchCarried([
    ['3', outcome],
    ['8', outcome],
  ]);
  assert.equal(facts.takeCarried('3'), outcome);
  assert.equal(facts.takeCarried('3'), undefined);
  facts.takenOver({ committed: 0n, intent: intent('9'), own: false, assignment: 2 });
  assert.equal(facts.hasCarried('8'), false);
});

test('PartitionWorker: released, fenced, taking-over, ready', () => {
  const worker = new PartitionWorker(3);
  assert.equal(worker.state(false), 'released');
  assert.equal(worker.state(true), 'taking-over');
  worker.facts.takenOver({ committed: 0n, intent: undefined, own: false, assignment: 1 });
  assert.equal(worker.state(true), 'ready');
  worker.facts.fenced(1_000, true, 0);
  assert.equal(worker.state(true, 10), 'fenced');
  assert.equal(worker.state(true, 2_000), 'taking-over', 'the hold is over: taken over again');
});

test('PartitionWorkers: one worker per partition, and a view of one of their parts', () => {
  const workers = new PartitionWorkers();
  assert.equal(workers.get(1), workers.get(1));
  assert.equal(workers.find(2), undefined);
  const lanes = workers.view((worker) => worker.lane);
  assert.equal(lanes.get(1), workers.get(1).lane);
  assert.equal(lanes.find(5), undefined);
  assert.equal([...lanes.all()].length, 1);
});
