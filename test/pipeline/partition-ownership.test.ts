import assert from 'node:assert/strict';
import { test } from 'node:test';
import { PartitionOwnership } from '../../src/pipeline/partition-ownership.ts';
import type { SendOutcome } from '../../src/pipeline/send-outcome.ts';

const intent = (untilOffset: string, by = 'other') => ({ untilOffset, atMs: 1, by });
const outcome = (): Promise<SendOutcome | undefined> =>
  Promise.resolve({ kind: 'accepted', requestId: 'r', attempts: 1 });

test('rebalanceStarted: a new generation, and the old one is told to stop waiting', () => {
  const ownership = new PartitionOwnership();
  const before = ownership.signal;
  ownership.rebalanceStarted();
  assert.equal(ownership.generation, 1);
  assert.equal(before.aborted, true);
  assert.equal(ownership.signal.aborted, false);
});

test('assigned: every partition is taken over again; a new member id means a rejoin', () => {
  const ownership = new PartitionOwnership();
  assert.deepEqual(ownership.assigned([0, 1], 'm1'), { rejoined: false });
  ownership.takenOver(0, {
    committed: 5n,
    intent: undefined,
    own: false,
    assignment: ownership.assignment,
  });
  assert.equal(ownership.needsTakeover(0), false);
  assert.deepEqual(ownership.assigned([0, 1], 'm1'), { rejoined: false });
  assert.equal(ownership.needsTakeover(0), true, 'read again after every rebalance');
  assert.equal(ownership.floor(0), undefined);
  assert.equal(ownership.assignment, 2);
  assert.deepEqual(ownership.assigned([0], 'm2'), { rejoined: true }, 'expelled and back');
  assert.equal(ownership.owns(1), false);
});

test('holds: work of the current assignment on an owned partition only', () => {
  const ownership = new PartitionOwnership();
  ownership.assigned([0, 1], 'm1');
  const first = ownership.assignment;
  assert.equal(ownership.holds(0, first), true);
  assert.equal(ownership.holds(2, first), false, 'never assigned here');
  ownership.rebalanceStarted();
  assert.equal(ownership.holds(0, first), true, 'a rebalance that has not answered yet');
  ownership.assigned([0, 1], 'm2');
  assert.equal(ownership.holds(0, first), false, 'rejoined: read again from the group offset');
  assert.equal(ownership.holds(0, ownership.assignment), true);
  const second = ownership.assignment;
  ownership.assigned([1], 'm2');
  assert.equal(ownership.holds(0, second), false, 'the partition went elsewhere');
  assert.equal(ownership.holds(0, ownership.assignment), false);
  assert.equal(ownership.holds(1, ownership.assignment), true);
});

test("takenOver, another writer's intent: its range is in doubt and does not count as covering", () => {
  const ownership = new PartitionOwnership();
  ownership.assigned([3], 'm');
  ownership.takenOver(3, {
    committed: 10n,
    intent: intent('19'),
    own: false,
    assignment: ownership.assignment,
  });
  assert.equal(ownership.floor(3), 10n);
  assert.equal(ownership.inDoubt(3, '19'), true);
  assert.equal(ownership.inDoubt(3, '20'), false);
  assert.equal(ownership.covers(3, '12'), false, 'the first batch writes its own intent');
});

test("takenOver, this process's own intent: nothing in doubt, and it covers its range", () => {
  const ownership = new PartitionOwnership();
  ownership.assigned([3], 'm');
  ownership.takenOver(3, {
    committed: 10n,
    intent: intent('19', 'me'),
    own: true,
    assignment: ownership.assignment,
  });
  assert.equal(ownership.inDoubt(3, '12'), false);
  assert.equal(ownership.covers(3, '19'), true);
  assert.equal(ownership.covers(3, '20'), false);
});

test('takenOver keeps doubt known from before the partition moved away, and drops what was committed', () => {
  const ownership = new PartitionOwnership();
  ownership.assigned([3], 'm');
  ownership.takenOver(3, {
    committed: 0n,
    intent: intent('30'),
    own: false,
    assignment: ownership.assignment,
  });
  ownership.batchCarried(3, [
    ['4', outcome()],
    ['40', outcome()],
  ]);
  ownership.assigned([], 'm');
  ownership.assigned([3], 'm');
  // Back with this process's own intent: the earlier doubt still stands.
  ownership.takenOver(3, {
    committed: 10n,
    intent: intent('35', 'me'),
    own: true,
    assignment: ownership.assignment,
  });
  assert.equal(ownership.inDoubt(3, '30'), true);
  assert.equal(ownership.hasCarried(3, '4'), false, 'below the committed offset: settled');
  assert.equal(ownership.hasCarried(3, '40'), true);
  // Another owner committed past the doubt meanwhile: settled.
  ownership.assigned([3], 'm');
  ownership.takenOver(3, {
    committed: 31n,
    intent: undefined,
    own: false,
    assignment: ownership.assignment,
  });
  assert.equal(ownership.doubtUntil(3), undefined);
});

test('intentWritten: the stored intent covers up to its offset', () => {
  const ownership = new PartitionOwnership();
  ownership.assigned([0], 'm');
  ownership.takenOver(0, {
    committed: 0n,
    intent: undefined,
    own: false,
    assignment: ownership.assignment,
  });
  ownership.intentWritten(0, '99');
  assert.equal(ownership.covers(0, '99'), true);
  assert.deepEqual(ownership.releasable(), [], "a batch's intent: its batch's commit comes next");
});

test('intentWritten at assignment: its group offset is releasable, and a read behind it refused', () => {
  const ownership = new PartitionOwnership();
  ownership.assigned([0], 'm');
  ownership.takenOver(0, {
    committed: undefined,
    intent: undefined,
    own: false,
    assignment: ownership.assignment,
  });
  ownership.intentWritten(0, '256', { topic: 't', offset: '0', assignment: ownership.assignment });
  assert.equal(ownership.covers(0, '256'), true);
  assert.deepEqual(
    ownership.releasable(),
    [{ partition: 0, topic: 't', offset: '0' }],
    'a drained stop clears it: the next owner need not wait for sends that never happened',
  );
  assert.equal(ownership.readBehind(0, undefined), true, 'a read from before it is stale');
  assert.equal(ownership.readBehind(0, 0n), false);
});

test('batchCommitted: doubt up to the batch is settled, doubt beyond stays; the offset is releasable', () => {
  const ownership = new PartitionOwnership();
  ownership.assigned([0], 'm');
  ownership.takenOver(0, {
    committed: 0n,
    intent: intent('50'),
    own: false,
    assignment: ownership.assignment,
  });
  assert.equal(ownership.doubtBeyond(0, '20'), '50');
  ownership.batchCommitted(0, { topic: 't', lastOffset: '20', intentUntil: '60', assignment: 1 });
  assert.equal(ownership.inDoubt(0, '30'), true);
  assert.deepEqual(ownership.releasable(), [], 'doubt left: the intent must stay');
  ownership.batchCommitted(0, { topic: 't', lastOffset: '50', intentUntil: '80', assignment: 1 });
  assert.equal(ownership.doubtUntil(0), undefined);
  assert.equal(ownership.covers(0, '80'), true);
  assert.deepEqual(ownership.releasable(), [{ partition: 0, topic: 't', offset: '51' }]);
  ownership.assigned([0], 'm');
  assert.deepEqual(ownership.releasable(), [], 'committed in an earlier assignment');
});

test('batchCarried: an outcome is taken over once by the batch read again', async () => {
  const ownership = new PartitionOwnership();
  ownership.assigned([0], 'm');
  const sent = outcome();
  ownership.batchCarried(0, [['7', sent]]);
  assert.equal(ownership.hasCarried(0, '7'), true);
  assert.equal(await ownership.takeCarried(0, '7'), await sent);
  assert.equal(ownership.takeCarried(0, '7'), undefined);
});

test('abandoned: lookups wait for the quiet period, then go on', () => {
  const ownership = new PartitionOwnership();
  ownership.abandoned(0, 1_000, 5_000);
  assert.equal(ownership.quietFor(0, 5_400), 600);
  assert.equal(ownership.quietFor(0, 7_000), 0);
  ownership.quietOver(0);
  assert.equal(ownership.quietFor(0, 5_400), 0);
});

test('fenced: held in this assignment, taken over again once the hold passed; a stale fencing is ignored', () => {
  const ownership = new PartitionOwnership();
  ownership.assigned([0], 'm');
  ownership.takenOver(0, {
    committed: 0n,
    intent: undefined,
    own: false,
    assignment: ownership.assignment,
  });
  ownership.fenced(0, 1_000, ownership.assignment - 1, 0);
  assert.equal(ownership.fencedState(0, 10), 'free', 'seen by a batch of an earlier assignment');
  ownership.fenced(0, 1_000, ownership.assignment, 0);
  assert.equal(ownership.fencedState(0, 10), 'hold');
  assert.equal(ownership.fencedState(0, 1_001), 'free');
  assert.equal(ownership.needsTakeover(0), true);
});

test('commitUncertain: the group offset is read again before the next batch', () => {
  const ownership = new PartitionOwnership();
  ownership.assigned([0], 'm');
  ownership.takenOver(0, {
    committed: 0n,
    intent: undefined,
    own: false,
    assignment: ownership.assignment,
  });
  ownership.commitUncertain(0);
  assert.equal(ownership.needsTakeover(0), true);
});

test("takenOver, another writer's intent after this process's own sends: those offsets are looked up, not taken from memory", () => {
  const ownership = new PartitionOwnership();
  ownership.assigned([3], 'm');
  ownership.takenOver(3, {
    committed: 0n,
    intent: intent('9', 'me'),
    own: true,
    assignment: ownership.assignment,
  });
  ownership.batchCarried(3, [
    ['5', outcome()],
    ['12', outcome()],
  ]);
  // The partition went to another replica, which wrote its own intent and sent; back here:
  ownership.assigned([3], 'm');
  ownership.takenOver(3, {
    committed: 0n,
    intent: intent('9'),
    own: false,
    assignment: ownership.assignment,
  });
  assert.equal(ownership.hasCarried(3, '5'), false, 'the other writer may have sent it');
  assert.equal(ownership.inDoubt(3, '5'), true);
  assert.equal(ownership.hasCarried(3, '12'), true, 'beyond its range: nobody else sent it');
});

test('fenced: what this replica committed last is no longer releasable, whatever the assignment', () => {
  const ownership = new PartitionOwnership();
  ownership.assigned([0], 'm');
  ownership.takenOver(0, {
    committed: 0n,
    intent: undefined,
    own: false,
    assignment: ownership.assignment,
  });
  ownership.batchCommitted(0, { topic: 't', lastOffset: '9', intentUntil: '19', assignment: 1 });
  assert.equal(ownership.releasable().length, 1);
  ownership.fenced(0, 1_000, ownership.assignment - 1, 0);
  assert.deepEqual(ownership.releasable(), [], 'another replica committed since');
});

test("readBehind: a takeover read older than this replica's own commit of a partition it kept is refused", () => {
  const ownership = new PartitionOwnership();
  ownership.assigned([0, 1], 'm');
  ownership.takenOver(0, {
    committed: undefined,
    intent: undefined,
    own: false,
    assignment: ownership.assignment,
  });
  assert.equal(ownership.readBehind(0, undefined), false, 'nothing committed here yet');
  ownership.batchCommitted(0, { topic: 't', lastOffset: '9', intentUntil: '19', assignment: 1 });
  // A rebalance that leaves partition 0 here; the group offset is read again.
  ownership.assigned([0, 1], 'm');
  assert.equal(ownership.readBehind(0, undefined), true, 'read before the first commit landed');
  assert.equal(ownership.readBehind(0, 0n), true, 'read before the last commit landed');
  assert.equal(ownership.readBehind(0, 10n), false);
  assert.equal(ownership.readBehind(0, 25n), false, 'moved on since: fine');
  assert.equal(ownership.readBehind(1, 0n), false, 'never committed by this replica');
});

test('readBehind says nothing once the partition was elsewhere or another replica fenced this one', () => {
  const ownership = new PartitionOwnership();
  ownership.assigned([0], 'm');
  ownership.batchCommitted(0, { topic: 't', lastOffset: '9', intentUntil: '19', assignment: 1 });
  ownership.assigned([], 'm');
  ownership.assigned([0], 'm');
  assert.equal(ownership.readBehind(0, 5n), false, 'another owner in between');
  ownership.batchCommitted(0, { topic: 't', lastOffset: '19', intentUntil: '29', assignment: 3 });
  ownership.fenced(0, 1_000, ownership.assignment, 0);
  assert.equal(ownership.readBehind(0, 5n), false, 'fenced: another producer took the id');
  ownership.assigned([0], 'm');
  ownership.batchCommitted(0, { topic: 't', lastOffset: '29', intentUntil: '39', assignment: 4 });
  ownership.assigned([0], 'm2');
  assert.equal(ownership.readBehind(0, 5n), false, 'expelled and back: the offsets may be reset');
});

test('takenOver from before the last assignment counts for nothing: the partition is taken over again', () => {
  const ownership = new PartitionOwnership();
  ownership.assigned([5], 'm1');
  const begunIn = ownership.assignment;
  ownership.batchCarried(5, [['0', outcome()]]);
  // The group answers while the takeover waits for the producer's initialisation.
  ownership.assigned([5], 'm1');
  const counted = ownership.takenOver(5, {
    committed: 0n,
    intent: intent('300', 'me'),
    own: true,
    assignment: begunIn,
  });
  assert.equal(counted, false);
  assert.equal(ownership.needsTakeover(5), true, 'the new assignment takes it over itself');
  assert.equal(ownership.covers(5, '90'), false, 'its intent covers nothing yet');
  assert.equal(ownership.hasCarried(5, '0'), true, 'earlier answers stay for the new read');
  // The same takeover in the current assignment counts.
  assert.equal(
    ownership.takenOver(5, {
      committed: 0n,
      intent: intent('300', 'me'),
      own: true,
      assignment: ownership.assignment,
    }),
    true,
  );
  assert.equal(ownership.needsTakeover(5), false);
  assert.equal(ownership.covers(5, '90'), true);
});

test('intentCleared and releasableOne: an idle partition with nothing unsettled is let go once', () => {
  const ownership = new PartitionOwnership();
  ownership.assigned([0], 'm');
  ownership.takenOver(0, {
    committed: 0n,
    intent: undefined,
    own: false,
    assignment: ownership.assignment,
  });
  assert.equal(ownership.releasableOne(0), undefined, 'nothing committed in this assignment');
  ownership.batchCommitted(0, {
    topic: 't',
    lastOffset: '9',
    intentUntil: '265',
    assignment: ownership.assignment,
  });
  assert.deepEqual(ownership.releasableOne(0), { topic: 't', offset: '10' });
  ownership.abandoned(0, 1_000, 0);
  assert.equal(ownership.releasableOne(0, 500), undefined, 'sends given up on may be on their way');
  assert.deepEqual(ownership.releasableOne(0, 1_000), { topic: 't', offset: '10' });
  ownership.intentCleared(0);
  assert.equal(ownership.covers(0, '10'), false, 'the next batch writes an intent first');
});

test("takenOver: a group offset read ahead of this replica's last commit makes that commit unreleasable", () => {
  const ownership = new PartitionOwnership();
  ownership.assigned([0], 'm');
  const assignment = ownership.assignment;
  ownership.takenOver(0, { committed: 0n, intent: undefined, own: false, assignment });
  ownership.batchCommitted(0, { topic: 't', lastOffset: '9', intentUntil: '265', assignment });
  // A later commit's answer was lost, it landed after all; the partition is read again.
  ownership.commitUncertain(0);
  ownership.takenOver(0, {
    committed: 20n,
    intent: intent('275', 'me'),
    own: true,
    assignment,
  });
  assert.equal(ownership.releasableOne(0), undefined, 'clearing at 10 would move the offset back');
  assert.deepEqual(ownership.releasable(), []);
  ownership.batchCommitted(0, { topic: 't', lastOffset: '29', intentUntil: '285', assignment });
  assert.deepEqual(ownership.releasableOne(0), { topic: 't', offset: '30' });
});

test('rebalanceStarted then assigned: batches handed out stop awaiting answers only when the group answers', () => {
  const ownership = new PartitionOwnership();
  ownership.assigned([0], 'm');
  assert.equal(ownership.rebalancing, false);
  const answered = ownership.answeredSignal;
  ownership.rebalanceStarted();
  assert.equal(
    ownership.rebalancing,
    false,
    'a failed heartbeat is no rebalance kafkajs rejoins for',
  );
  ownership.rebalanceStarted({ announced: true });
  assert.equal(ownership.rebalancing, true);
  assert.equal(answered.aborted, false, 'a rebalance only begun leaves the partitions here');
  ownership.assigned([0], 'm');
  assert.equal(ownership.rebalancing, false);
  assert.equal(answered.aborted, true, "the group's answer ends the wait");
  assert.equal(
    ownership.answeredSignal.aborted,
    false,
    'the new assignment has a signal of its own',
  );
});

test('sendsContinue: sends handed out go on through an announced rebalance until the group answers, never past a failed heartbeat', () => {
  const ownership = new PartitionOwnership();
  ownership.assigned([0], 'm');
  const generation = ownership.generation;
  const assignment = ownership.assignment;
  assert.equal(ownership.sendsContinue(generation, assignment), true, 'nothing happened since');
  ownership.rebalanceStarted({ announced: true });
  assert.equal(
    ownership.sendsContinue(generation, assignment),
    true,
    'the partitions stay here until the group answers: the batch goes out whole',
  );
  ownership.rebalanceStarted();
  assert.equal(
    ownership.sendsContinue(generation, assignment),
    false,
    'a failed heartbeat during it puts the membership in doubt',
  );

  const answered = new PartitionOwnership();
  answered.assigned([0], 'm');
  const before = { generation: answered.generation, assignment: answered.assignment };
  answered.rebalanceStarted({ announced: true });
  answered.assigned([0], 'm');
  assert.equal(
    answered.sendsContinue(before.generation, before.assignment),
    false,
    'the group answered: what was not sent by then is read again',
  );

  const doubted = new PartitionOwnership();
  doubted.assigned([0], 'm');
  const first = { generation: doubted.generation, assignment: doubted.assignment };
  doubted.rebalanceStarted();
  doubted.rebalanceStarted({ announced: true });
  assert.equal(
    doubted.sendsContinue(first.generation, first.assignment),
    false,
    'a failed heartbeat before the announced rebalance stopped them already',
  );
  assert.equal(
    doubted.sendsContinue(doubted.generation, doubted.assignment),
    true,
    'sends handed out after it are of the current generation',
  );
});

test('releasable: carried outcomes given up before their request left keep no intent; one that may have left does', async () => {
  const committedAt = (ownership: PartitionOwnership) =>
    ownership.batchCommitted(0, { topic: 't', lastOffset: '9', intentUntil: '265', assignment: 1 });
  const unsent = new PartitionOwnership();
  unsent.assigned([0], 'm');
  committedAt(unsent);
  unsent.batchCarried(0, [['10', Promise.resolve({ kind: 'abandoned', sent: false })]]);
  assert.deepEqual(unsent.releasable(), [], 'not yet settled: it may still be on its way');
  await Promise.resolve();
  assert.deepEqual(unsent.releasable(), [{ partition: 0, topic: 't', offset: '10' }]);
  assert.equal(unsent.hasCarried(0, '10'), true, 'still carried: the next read sends it');

  const mayHaveLeft = new PartitionOwnership();
  mayHaveLeft.assigned([0], 'm');
  committedAt(mayHaveLeft);
  mayHaveLeft.batchCarried(0, [
    ['10', Promise.resolve({ kind: 'abandoned', sent: false })],
    ['11', Promise.resolve({ kind: 'abandoned', sent: true })],
  ]);
  await Promise.resolve();
  assert.deepEqual(mayHaveLeft.releasable(), [], 'a request that may have left keeps the intent');

  const answered = new PartitionOwnership();
  answered.assigned([0], 'm');
  committedAt(answered);
  answered.batchCarried(0, [['10', outcome()]]);
  await Promise.resolve();
  assert.deepEqual(answered.releasable(), [], 'an answered send not committed keeps the intent');
  await answered.takeCarried(0, '10');
  assert.deepEqual(answered.releasable(), [{ partition: 0, topic: 't', offset: '10' }]);
});
