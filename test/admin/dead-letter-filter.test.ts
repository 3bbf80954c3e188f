import assert from 'node:assert/strict';
import { test } from 'node:test';
import { matchesFilter, originalHeaders } from '../../src/admin/dead-letter-replay.ts';

const letter = (headers: Record<string, string>) => ({
  partition: 0,
  offset: 0,
  timestamp: 0,
  key: null,
  value: Buffer.from('{"type":"sms","id":1}'),
  headers,
});

test('a replay keeps the command headers, ferry-transport among them, and drops what dead-lettering added', () => {
  assert.deepEqual(
    originalHeaders({
      'ferry-transport': 'async',
      traceparent: '00-abc-def-01',
      'ferry-error': 'x',
      'ferry-error-code': 'transport',
      'ferry-delivery': 'unsent',
      'ferry-source-topic': 't',
      'ferry-source-partition': '0',
      'ferry-source-offset': '1',
      'ferry-truncated': 'true',
      'ferry-original-bytes': '9',
    }),
    { 'ferry-transport': 'async', traceparent: '00-abc-def-01' },
  );
});

test('in-doubt dead letters are replayed only when asked for; cut ones never', () => {
  const doubt = letter({ 'ferry-delivery': 'in_doubt' });
  assert.equal(matchesFilter(doubt, {}), false);
  assert.equal(matchesFilter(doubt, { includeInDoubt: true }), true);
  assert.equal(matchesFilter(letter({ 'ferry-delivery': 'unsent' }), {}), true);
  assert.equal(
    matchesFilter(letter({ 'ferry-truncated': 'true' }), { includeInDoubt: true }),
    false,
  );
});
