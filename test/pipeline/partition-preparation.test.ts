import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { LogBounds } from '../../src/kafka/kafka-port.ts';
import type { PartitionHandover } from '../../src/pipeline/partition-handover.ts';
import { PartitionOwnership } from '../../src/pipeline/partition-ownership.ts';
import { preparePartition } from '../../src/pipeline/partition-preparation.ts';
import { decodeSendIntent, encodeSendIntent } from '../../src/pipeline/send-intent.ts';

interface Setup {
  /** The group offset the takeover reads (undefined: the group never committed). */
  committed?: bigint;
  ownIntentUntil?: string;
  bounds: LogBounds;
  stopping?: boolean;
  /** Something happens while the log's bounds are read. */
  whileReading?: (ownership: PartitionOwnership) => void;
}

/** A handover that records what it was asked; the takeover reads `committed`. */
function prepare(setup: Setup) {
  const ownership = new PartitionOwnership();
  ownership.assigned([0], 'm');
  const assignment = ownership.assignment;
  const calls: string[] = [];
  const commits: { offset: string; metadata: string | undefined }[] = [];
  const handover = {
    takeOver: async () => {
      calls.push('takeOver');
      const intent = setup.ownIntentUntil
        ? { untilOffset: setup.ownIntentUntil, atMs: 1, by: 'me' }
        : undefined;
      ownership.takenOver(0, { committed: setup.committed, intent, own: true, assignment });
      return 'done' as const;
    },
    logBounds: async () => {
      setup.whileReading?.(ownership);
      return setup.bounds;
    },
    commit: async (
      _batch: unknown,
      _records: unknown,
      offset: string,
      intent: Parameters<typeof encodeSendIntent>[0] | undefined,
    ) => {
      commits.push({ offset, metadata: intent ? encodeSendIntent(intent) : undefined });
      return true;
    },
  } as unknown as PartitionHandover;
  const run = () =>
    preparePartition(
      {
        ownership,
        handover,
        instanceId: 'me',
        topic: 't',
        stopping: () => setup.stopping ?? false,
      },
      0,
      ownership.generation,
      assignment,
      ownership.signal,
    );
  return { ownership, calls, commits, run };
}

test('an idle partition is taken over and gets no intent', async () => {
  const { ownership, calls, commits, run } = prepare({
    committed: 10n,
    bounds: { start: '0', end: '10' },
  });
  assert.equal(await run(), 'ready');
  assert.deepEqual(calls, ['takeOver']);
  assert.deepEqual(commits, [], 'no intent under which nothing may ever be sent');
  assert.equal(ownership.needsTakeover(0), false);
});

test('with commands waiting, the group offset is committed unchanged with an intent reaching ahead', async () => {
  const { ownership, commits, run } = prepare({
    committed: 10n,
    bounds: { start: '0', end: '15' },
  });
  assert.equal(await run(), 'ready');
  assert.equal(commits.length, 1);
  assert.equal(commits[0]?.offset, '10');
  assert.equal(decodeSendIntent(commits[0]?.metadata)?.untilOffset, '266');
  assert.equal(ownership.covers(0, '266'), true, 'the first batches are covered');
  assert.deepEqual(ownership.releasable(), [{ partition: 0, topic: 't', offset: '10' }]);
});

test('a group that never committed gets its intent at the log start, where it begins reading', async () => {
  const { commits, run } = prepare({ bounds: { start: '5', end: '9' } });
  assert.equal(await run(), 'ready');
  assert.equal(commits[0]?.offset, '5');
});

test('an own intent read back that covers what is ahead is not written again', async () => {
  const { commits, run } = prepare({
    committed: 10n,
    ownIntentUntil: '300',
    bounds: { start: '0', end: '15' },
  });
  assert.equal(await run(), 'ready');
  assert.deepEqual(commits, []);
});

test('stopping: no intent is written', async () => {
  const { commits, run } = prepare({
    committed: 10n,
    bounds: { start: '0', end: '15' },
    stopping: true,
  });
  assert.equal(await run(), 'left-to-first-batch');
  assert.deepEqual(commits, []);
});

test('a fencing held: nothing is touched, the first batch waits it out', async () => {
  const { ownership, calls, run } = prepare({ committed: 10n, bounds: { start: '0', end: '15' } });
  ownership.fenced(0, 60_000, ownership.assignment);
  assert.equal(await run(), 'left-to-first-batch');
  assert.deepEqual(calls, []);
});

test('the group answering while the log is read: nothing is committed (what was read is forgotten)', async () => {
  const { commits, run } = prepare({
    committed: 10n,
    bounds: { start: '0', end: '15' },
    whileReading: (ownership) => ownership.assigned([0], 'm'),
  });
  assert.equal(await run(), 'left-to-first-batch');
  assert.deepEqual(commits, [], 'a commit at the log start would move the group offset back');
});
