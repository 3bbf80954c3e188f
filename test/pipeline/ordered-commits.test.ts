import assert from 'node:assert/strict';
import { test } from 'node:test';
import { type Committable, OrderedCommits } from '../../src/pipeline/ordered-commits.ts';

const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

interface Item extends Committable {
  readonly name: string;
  answer(): void;
}

function item(name: string): Item {
  let answered = false;
  let answer: () => void = () => undefined;
  const ready = new Promise<void>((resolve) => {
    answer = () => {
      answered = true;
      resolve();
    };
  });
  return { name, ready, isReady: () => answered, answer: () => answer() };
}

function commits(outcomes: boolean[] = [], minGapMs = 0) {
  const log: string[] = [];
  let release: () => void = () => undefined;
  const queue = new OrderedCommits<Item>({
    minGapMs,
    commit: async (partition, items) => {
      log.push(`commit p${partition} ${items.map((i) => i.name).join(',')}`);
      await new Promise<void>((resolve) => {
        release = resolve;
      });
      return outcomes.shift() ?? true;
    },
    committed: (_p, items) => log.push(`committed ${items.map((i) => i.name).join(',')}`),
    failed: (_p, items) => log.push(`failed ${items.map((i) => i.name).join(',')}`),
  });
  return { queue, log, release: () => release() };
}

test('a batch answered before the one ahead of it waits, then both commit in one transaction', async () => {
  const { queue, log, release } = commits();
  const a = item('a');
  const b = item('b');
  queue.push(0, a);
  queue.push(0, b);
  b.answer();
  await nextTurn();
  assert.deepEqual(log, [], 'b does not commit before a');
  a.answer();
  await nextTurn();
  assert.deepEqual(log, ['commit p0 a,b']);
  release();
  await queue.idle(0);
  assert.deepEqual(log, ['commit p0 a,b', 'committed a,b']);
  assert.equal(queue.busy(0), false);
});

test('batches answered while a commit runs are the next commit, together', async () => {
  const { queue, log, release } = commits();
  const [a, b, c] = [item('a'), item('b'), item('c')];
  queue.push(0, a);
  a.answer();
  await nextTurn();
  queue.push(0, b);
  queue.push(0, c);
  b.answer();
  c.answer();
  release();
  await nextTurn();
  await nextTurn();
  assert.deepEqual(log, ['commit p0 a', 'committed a', 'commit p0 b,c']);
  release();
  await queue.idleAll();
});

test('a failed commit fails every batch queued behind it, answered or not, and nothing commits', async () => {
  const { queue, log, release } = commits([false]);
  const [a, b, c] = [item('a'), item('b'), item('c')];
  queue.push(0, a);
  queue.push(0, b);
  queue.push(0, c);
  a.answer();
  await nextTurn();
  release();
  await queue.idle(0);
  assert.deepEqual(log, ['commit p0 a', 'failed a,b,c']);
  assert.equal(queue.busy(0), false);
});

test('partitions commit independently', async () => {
  const { queue, log } = commits();
  const a = item('a');
  const x = item('x');
  queue.push(0, a);
  queue.push(1, x);
  x.answer();
  await nextTurn();
  assert.deepEqual(log, ['commit p1 x']);
  assert.equal(queue.busy(0), true);
});

test("a partition's next commit begins minGapMs after its last one ended; answers meanwhile join it", async () => {
  const { queue, log, release } = commits([], 80);
  const [a, b, c] = [item('a'), item('b'), item('c')];
  queue.push(0, a);
  a.answer();
  await nextTurn();
  assert.deepEqual(log, ['commit p0 a'], 'the first commit does not wait');
  await new Promise((resolve) => setTimeout(resolve, 100));
  release();
  await nextTurn();
  const ended = performance.now();
  queue.push(0, b);
  b.answer();
  await nextTurn();
  assert.deepEqual(log, ['commit p0 a', 'committed a'], 'b waits out the gap');
  queue.push(0, c);
  c.answer();
  while (log.length < 3) await new Promise((resolve) => setTimeout(resolve, 5));
  const waited = performance.now() - ended;
  assert.deepEqual(log, ['commit p0 a', 'committed a', 'commit p0 b,c']);
  assert.ok(waited >= 75, `began ${waited.toFixed(0)} ms after the last commit ended`);
  release();
  await queue.idleAll();
});

test('the gap is per partition: another partition commits at once', async () => {
  const { queue, log, release } = commits([], 500);
  const [a, x] = [item('a'), item('x')];
  queue.push(0, a);
  a.answer();
  await nextTurn();
  release();
  queue.push(1, x);
  x.answer();
  await nextTurn();
  await nextTurn();
  assert.ok(log.includes('commit p1 x'), log.join('; '));
  release();
  await queue.idleAll();
});

test("a batch pushed in the very step its partition's drain ends is committed too", async () => {
  const log: string[] = [];
  let finishCommit: () => void = () => undefined;
  let commitReturned: Promise<boolean> | undefined;
  const queue = new OrderedCommits<Item>({
    commit: (_p, items) => {
      log.push(`commit ${items.map((i) => i.name).join(',')}`);
      commitReturned = new Promise<void>((resolve) => {
        finishCommit = resolve;
      }).then(() => true);
      return commitReturned;
    },
    committed: (_p, items) => log.push(`committed ${items.map((i) => i.name).join(',')}`),
    failed: (_p, items) => log.push(`failed ${items.map((i) => i.name).join(',')}`),
  });
  const [a, b] = [item('a'), item('b')];
  a.answer();
  b.answer();
  queue.push(0, a);
  await nextTurn();
  // Registered after the drain's own wait on this commit: it runs right after the drain
  // has found its queue empty, before anything else the drain's end may schedule.
  void commitReturned?.then(() => queue.push(0, b));
  finishCommit();
  await nextTurn();
  await nextTurn();
  assert.deepEqual(log, ['commit a', 'committed a', 'commit b'], 'b is being committed');
  finishCommit();
  await queue.idle(0);
  assert.deepEqual(log, ['commit a', 'committed a', 'commit b', 'committed b']);
  assert.equal(queue.busy(0), false);
});

test('canCommit: answered batches ahead of one that cannot commit are committed without it; it fails alone', async () => {
  const log: string[] = [];
  const queue = new OrderedCommits<Item>({
    commit: async (_partition, items) => {
      log.push(`commit ${items.map((i) => i.name).join(',')}`);
      return !items.some((i) => i.name === 'b');
    },
    committed: (_p, items) => log.push(`committed ${items.map((i) => i.name).join(',')}`),
    failed: (_p, items) => log.push(`failed ${items.map((i) => i.name).join(',')}`),
    canCommit: (i) => i.name !== 'b',
  });
  const [a, b, c] = [item('a'), item('b'), item('c')];
  for (const i of [a, b, c]) queue.push(0, i);
  c.answer();
  b.answer();
  a.answer();
  await queue.idle(0);
  assert.deepEqual(log, ['commit a', 'committed a', 'commit b', 'failed b,c']);
});
