import assert from 'node:assert/strict';
import { test } from 'node:test';
import { PartitionLanes } from '../../src/pipeline/partition-lanes.ts';

const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

/** Lanes whose turns wait for `release()` and record what they handled and dropped. */
function lanes() {
  const handled: string[][] = [];
  const dropped: string[][] = [];
  let assignment = 1;
  let release: () => void = () => undefined;
  const lanes = new PartitionLanes<string>({
    handle: async (partition, items) => {
      handled.push([`p${partition}`, ...items]);
      await new Promise<void>((resolve) => {
        release = resolve;
      });
    },
    prepare: async (partition) => {
      handled.push([`p${partition}`, `prepared in ${assignment}`]);
      await new Promise<void>((resolve) => {
        release = resolve;
      });
    },
    release: async (partition) => {
      handled.push([`p${partition}`, `let go in ${assignment}`]);
      await new Promise<void>((resolve) => {
        release = resolve;
      });
    },
    drop: (items) => dropped.push([...items]),
    assignment: () => assignment,
  });
  return {
    lanes,
    handled,
    dropped,
    release: () => release(),
    rejoin: () => {
      assignment += 1;
    },
  };
}

test('enter: batches handed over in one turn of the event loop are handled together', async () => {
  const { lanes: l, handled } = lanes();
  l.enter(0, 'a');
  l.enter(0, 'b');
  await nextTurn();
  assert.deepEqual(handled, [['p0', 'a', 'b']]);
});

test('enter: what queues behind a turn in progress is handled next, as one', async () => {
  const { lanes: l, handled, release } = lanes();
  l.enter(0, 'a');
  await nextTurn();
  l.enter(0, 'b');
  l.enter(0, 'c');
  l.enter(1, 'x');
  await nextTurn();
  // Partition 1 does not wait for partition 0; partition 0's next turn does.
  assert.deepEqual(handled, [
    ['p0', 'a'],
    ['p1', 'x'],
  ]);
  release(); // p1's turn (the last to start)
  await nextTurn();
  assert.equal(l.waiting, 3, "p0's turn in progress and its two queued batches");
});

test('rewound: what is queued behind the failed turn is dropped, not handled', async () => {
  const { lanes: l, handled, dropped, release } = lanes();
  l.enter(0, 'a');
  await nextTurn();
  l.enter(0, 'b');
  l.enter(0, 'c');
  l.rewound(0);
  assert.deepEqual(dropped, [['b', 'c']]);
  release();
  await l.idle();
  assert.deepEqual(handled, [['p0', 'a']]);
  // Fetched again from the rewind: handled as usual.
  l.enter(0, 'b');
  await nextTurn();
  assert.deepEqual(handled, [
    ['p0', 'a'],
    ['p0', 'b'],
  ]);
});

test('a batch handed over in an earlier assignment is dropped when its turn comes', async () => {
  const { lanes: l, handled, dropped, release, rejoin } = lanes();
  l.enter(0, 'a');
  await nextTurn();
  l.enter(0, 'old');
  rejoin();
  l.enter(0, 'new');
  release();
  await nextTurn();
  await nextTurn();
  assert.deepEqual(dropped, [['old']]);
  assert.deepEqual(handled, [
    ['p0', 'a'],
    ['p0', 'new'],
  ]);
});

test('close: queued batches are dropped, later ones too; idle waits for the turn in progress', async () => {
  const { lanes: l, dropped, release } = lanes();
  l.enter(0, 'a');
  await nextTurn();
  l.enter(0, 'b');
  l.close();
  l.enter(0, 'c');
  assert.deepEqual(dropped, [['b'], ['c']]);
  let idle = false;
  const waiting = l.idle().then(() => {
    idle = true;
  });
  await nextTurn();
  assert.equal(idle, false);
  release();
  await waiting;
  assert.equal(l.waiting, 0);
});

test('prepare: runs as the next turn, before batches that arrive while it runs', async () => {
  const { lanes: l, handled, release } = lanes();
  l.prepare(0);
  await nextTurn();
  l.enter(0, 'a');
  l.enter(0, 'b');
  await nextTurn();
  assert.deepEqual(handled, [['p0', 'prepared in 1']], 'the batches wait for the preparation');
  release();
  await nextTurn();
  assert.deepEqual(handled, [
    ['p0', 'prepared in 1'],
    ['p0', 'a', 'b'],
  ]);
  release();
  await l.idle();
  assert.equal(l.waiting, 0);
});

test('prepare: waits for the turn in progress of the earlier assignment', async () => {
  const { lanes: l, handled, dropped, release, rejoin } = lanes();
  l.enter(0, 'old');
  await nextTurn();
  l.enter(0, 'old queued');
  rejoin();
  l.prepare(0);
  l.enter(0, 'new');
  await nextTurn();
  assert.deepEqual(handled, [['p0', 'old']], 'nothing begins beside the turn in progress');
  release();
  await nextTurn();
  await nextTurn();
  assert.deepEqual(handled, [
    ['p0', 'old'],
    ['p0', 'prepared in 2'],
  ]);
  release();
  await nextTurn();
  assert.deepEqual(dropped, [['old queued']]);
  assert.deepEqual(handled.at(-1), ['p0', 'new']);
  release();
  await l.idle();
});

test('prepare: the group answering again during a preparation prepares again before any batch', async () => {
  const { lanes: l, handled, release, rejoin } = lanes();
  l.prepare(0);
  await nextTurn();
  rejoin();
  l.prepare(0);
  l.enter(0, 'new');
  release();
  await nextTurn();
  assert.deepEqual(handled, [
    ['p0', 'prepared in 1'],
    ['p0', 'prepared in 2'],
  ]);
  release();
  await nextTurn();
  assert.deepEqual(handled.at(-1), ['p0', 'new']);
  release();
  await l.idle();
});

test('prepare: one of an earlier assignment not begun yet is dropped; a closed lane prepares nothing', async () => {
  const { lanes: l, handled, release, rejoin } = lanes();
  l.enter(0, 'a');
  await nextTurn();
  l.prepare(0);
  rejoin();
  release();
  await nextTurn();
  await nextTurn();
  assert.deepEqual(handled, [['p0', 'a']], 'the stale preparation never ran');
  await l.idle();
  l.close();
  l.prepare(1);
  await nextTurn();
  assert.deepEqual(handled, [['p0', 'a']]);
  assert.equal(l.waiting, 0);
});

test('release: an idle lane lets its partition go as its next turn, before what arrives after it began', async () => {
  const { lanes: l, handled, release } = lanes();
  l.enter(0, 'a');
  await nextTurn();
  release();
  await l.idle();
  l.release(0);
  l.enter(0, 'b');
  await nextTurn();
  assert.deepEqual(
    handled,
    [
      ['p0', 'a'],
      ['p0', 'b'],
    ],
    'a batch arrived before the turn began: the batch is handled first',
  );
  release();
  await nextTurn();
  assert.deepEqual(handled.slice(-1), [['p0', 'let go in 1']], 'then the partition is let go');
  release();
  await l.idle();
  l.release(0);
  await nextTurn();
  l.enter(0, 'c');
  await nextTurn();
  assert.deepEqual(handled.slice(-1), [['p0', 'let go in 1']]);
  release();
  await nextTurn();
  assert.deepEqual(handled.slice(-1), [['p0', 'c']], 'the batch after it is handled next');
  release();
  await l.idle();
});

test('release: a lane with a turn in progress lets go after it; one asked in an earlier assignment is dropped', async () => {
  const { lanes: l, handled, release, rejoin } = lanes();
  l.enter(0, 'a');
  await nextTurn();
  l.release(0);
  await nextTurn();
  assert.deepEqual(handled, [['p0', 'a']], 'the turn in progress goes on');
  release();
  await nextTurn();
  assert.deepEqual(handled.slice(-1), [['p0', 'let go in 1']], 'let go once the turn ended');
  release();
  await l.idle();
  l.release(1);
  await nextTurn();
  assert.equal(handled.length, 2, 'a partition never handled here has no lane to let go');
  l.enter(0, 'b');
  await nextTurn();
  l.release(0);
  rejoin();
  release();
  await l.idle();
  assert.deepEqual(
    handled.slice(-1),
    [['p0', 'b']],
    'the group answered before the turn ended: not let go',
  );
});

test('release: batches queued behind the turn are handled first, then the partition is let go', async () => {
  const { lanes: l, handled, release } = lanes();
  l.enter(0, 'a');
  await nextTurn();
  l.enter(0, 'b');
  l.release(0);
  release();
  await nextTurn();
  assert.deepEqual(handled.slice(-1), [['p0', 'b']]);
  release();
  await nextTurn();
  assert.deepEqual(handled.slice(-1), [['p0', 'let go in 1']]);
  release();
  await l.idle();
  assert.equal(handled.length, 3);
});
