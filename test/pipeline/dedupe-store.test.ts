/**
 * The dedupe store's transitions one by one: restored, handedOut, committed, cleared,
 * and its window and id bound.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DedupeStore, type FirstCompletion } from '../../src/pipeline/dedupe-store.ts';
import type { SendOutcome } from '../../src/pipeline/send-outcome.ts';

const HOUR = 3_600_000;

function first(offset: string, atMs = Date.now()): FirstCompletion {
  return {
    partition: 0,
    offset,
    success: true,
    msgId: `m${offset}`,
    completedAt: new Date(atMs).toISOString(),
    atMs,
  };
}

const outcome = (): Promise<SendOutcome | undefined> => Promise.resolve(undefined);

test('restored: a record within the window is known, one past it is not', () => {
  const store = new DedupeStore({ windowMs: HOUR, maxIds: 10 });
  const now = Date.now();
  store.restored('1', first('5', now - HOUR / 2), now);
  store.restored('2', first('6', now - 2 * HOUR), now);
  assert.equal(store.firstOf('1', now)?.offset, '5');
  assert.equal(store.firstOf('2', now), undefined);
  assert.equal(store.size, 1);
});

test('firstOf forgets an id once its window has passed', () => {
  const store = new DedupeStore({ windowMs: HOUR, maxIds: 10 });
  const now = Date.now();
  store.committed('1', first('5', now));
  assert.equal(store.firstOf('1', now + HOUR - 1)?.offset, '5');
  assert.equal(store.firstOf('1', now + HOUR), undefined);
  assert.equal(store.size, 0);
});

test('handedOut: a later copy finds the earlier outcome; an earlier or the same offset does not', () => {
  const store = new DedupeStore({ windowMs: HOUR, maxIds: 10 });
  const pending = outcome();
  store.handedOut('7', '10', pending);
  assert.equal(store.earlierOf('7', '12'), pending);
  assert.equal(store.earlierOf('7', '10'), undefined);
  assert.equal(store.earlierOf('7', '9'), undefined);
  assert.equal(store.earlierOf('8', '12'), undefined);
  assert.equal(store.handedOutOffset('7'), '10');
});

test('committed: the id becomes known and its hand-out is done; a later copy handed out stays', () => {
  const store = new DedupeStore({ windowMs: HOUR, maxIds: 10 });
  store.handedOut('7', '10', outcome());
  store.committed('7', first('10'));
  assert.equal(store.earlierOf('7', '12'), undefined);
  assert.equal(store.firstOf('7')?.offset, '10');
  const copy = outcome();
  store.handedOut('7', '14', copy);
  store.committed('7', first('10'));
  assert.equal(store.earlierOf('7', '15'), copy, 'a copy past the first is still on its way');
});

test('cleared: a takeover forgets everything, to be read back', () => {
  const store = new DedupeStore({ windowMs: HOUR, maxIds: 10 });
  store.committed('1', first('1'));
  store.handedOut('2', '2', outcome());
  store.cleared();
  assert.equal(store.size, 0);
  assert.equal(store.firstOf('1'), undefined);
  assert.equal(store.earlierOf('2', '3'), undefined);
});

test('maxIds: past the bound the oldest completions go first', () => {
  const store = new DedupeStore({ windowMs: HOUR, maxIds: 3 });
  for (let i = 1; i <= 5; i++) store.committed(String(i), first(String(i)));
  assert.equal(store.size, 3);
  assert.deepEqual(
    ['1', '2', '3', '4', '5'].map((id) => store.firstOf(id) !== undefined),
    [false, false, true, true, true],
  );
});

test('settled: a command committed without reaching the gateway is on its way no longer', () => {
  const store = new DedupeStore({ windowMs: HOUR, maxIds: 10 });
  store.handedOut('7', '10', outcome());
  store.settled('7', '9');
  assert.equal(store.onTheirWay, 1, 'a result before it settles nothing of it');
  store.settled('7', '10');
  assert.equal(store.onTheirWay, 0);
  assert.equal(store.size, 0, 'nothing was completed');
});
