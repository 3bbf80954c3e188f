import assert from 'node:assert/strict';
import { test } from 'node:test';
import { FirstTakeovers } from '../../src/pipeline/first-takeovers.ts';

test('done once every partition of the first assignment ended its preparation', () => {
  const first = new FirstTakeovers();
  assert.equal(first.done, false, 'nothing assigned yet');
  first.assigned([0, 1]);
  assert.equal(first.ended(0), false);
  assert.equal(first.ended(0), false, 'the same partition twice counts once');
  assert.equal(first.done, false);
  assert.equal(first.ended(1), true, 'the last one');
  assert.equal(first.done, true);
});

test('an empty first assignment has nothing to wait for', () => {
  const first = new FirstTakeovers();
  first.assigned([]);
  assert.equal(first.done, true);
});

test('a newer assignment before the first is done is the one waited for', () => {
  const first = new FirstTakeovers();
  first.assigned([0, 1]);
  first.ended(0);
  first.assigned([2]);
  assert.equal(first.ended(1), false, 'a partition no longer assigned');
  assert.equal(first.done, false);
  assert.equal(first.ended(2), true);
});

test('once done, later assignments never make it undone', () => {
  const first = new FirstTakeovers();
  first.assigned([0]);
  first.ended(0);
  first.assigned([0, 1]);
  assert.equal(first.done, true);
  assert.equal(first.ended(1), false);
});
