import assert from 'node:assert/strict';
import { test } from 'node:test';
import { nextProgress, OffsetRanges } from '../../src/admin/replay-progress.ts';

test('offset ranges merge neighbours and round-trip through their text', () => {
  const ranges = new OffsetRanges();
  for (const offset of [7, 3, 4, 5, 12, 6]) ranges.add(offset);
  assert.equal(ranges.format(), 'v1:3-7,12');
  const parsed = OffsetRanges.parse('v1:3-7,12');
  assert.equal(parsed.has(5), true);
  assert.equal(parsed.has(8), false);
  assert.equal(parsed.format(), 'v1:3-7,12');
  assert.equal(OffsetRanges.parse(null).isEmpty, true);
  assert.throws(() => OffsetRanges.parse('garbage'), TypeError);
  assert.throws(() => OffsetRanges.parse('v1:9-3'), TypeError);
});

test('progress moves to the end of the scan when nothing was skipped', () => {
  const replayed = OffsetRanges.parse('v1:20');
  assert.deepEqual(nextProgress(0, 10, undefined, replayed), { offset: 10, metadata: 'v1:20' });
});

test('progress stops at the first skipped dead letter and remembers replays beyond it', () => {
  const replayed = OffsetRanges.parse('v1:0,3-4');
  assert.deepEqual(nextProgress(0, 6, 1, replayed), { offset: 1, metadata: 'v1:3-4' });
});

test('progress moves over replays that follow the scan end', () => {
  const replayed = OffsetRanges.parse('v1:5-8');
  assert.deepEqual(nextProgress(2, 5, undefined, replayed), { offset: 9, metadata: null });
});

test('progress never goes back before where the run started', () => {
  assert.deepEqual(nextProgress(10, 10, undefined, new OffsetRanges()), {
    offset: 10,
    metadata: null,
  });
});
