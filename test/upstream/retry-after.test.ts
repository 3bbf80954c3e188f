import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseRetryAfter } from '../../src/upstream/retry-after.ts';

const NOW = Date.parse('2026-11-27T05:30:00.000Z');

test('Retry-After in seconds is that many seconds', () => {
  assert.equal(parseRetryAfter('0', NOW), 0);
  assert.equal(parseRetryAfter('7', NOW), 7_000);
  assert.equal(parseRetryAfter(' 120 ', NOW), 120_000);
  assert.equal(parseRetryAfter(['3', '9'], NOW), 3_000, 'a repeated header counts by the first');
});

test('Retry-After as an HTTP-date is the time until then, 0 once past', () => {
  assert.equal(parseRetryAfter('Fri, 27 Nov 2026 05:30:45 GMT', NOW), 45_000);
  // The obsolete forms RFC 9110 still asks recipients to read.
  assert.equal(parseRetryAfter('Friday, 27-Nov-26 05:31:00 GMT', NOW), 60_000);
  assert.equal(parseRetryAfter('Fri Nov 27 05:30:10 2026', NOW), 10_000, 'asctime, UTC');
  assert.equal(parseRetryAfter('Fri, 27 Nov 2026 05:29:00 GMT', NOW), 0);
});

test('anything else is no Retry-After', () => {
  for (const value of [undefined, '', '-5', '1.5', 'soon', '2026-11-27T05:31:00Z', '5 s', []]) {
    assert.equal(parseRetryAfter(value, NOW), undefined, JSON.stringify(value));
  }
});
