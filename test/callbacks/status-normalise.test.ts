import assert from 'node:assert/strict';
import { test } from 'node:test';
import { normaliseCallback, normaliseDateTime } from '../../src/callbacks/status-normalise.ts';
import { validateStatusCallback } from '../../src/contract/index.ts';

test('ids as numbers or strings, success as 1/0 or "true"/"false", all read the same', () => {
  const expected = {
    success: true,
    id: '42',
    msg_id: '9001',
    status: 'DELIVERED',
    updated: '2024-05-01T08:00:00.000Z',
  };
  for (const variant of [
    { success: true, id: 42, msg_id: 9001 },
    { success: 1, id: '42', msg_id: '9001' },
    { success: 'true', id: 42, msg_id: '9001' },
    { success: '1', id: '42', msg_id: 9001 },
    { success: ' TRUE ', id: '42', msg_id: 9001 },
  ]) {
    const normalised = normaliseCallback({
      ...variant,
      status: 'DELIVERED',
      updated: '2024-05-01T10:00:00+02:00',
    });
    assert.ok(normalised.ok, JSON.stringify(variant));
    assert.deepEqual(normalised.event, expected, JSON.stringify(variant));
    assert.deepEqual(normalised.key, { field: 'id', key: '42' });
    assert.equal(validateStatusCallback(normalised.event).ok, true, 'the contract shape');
  }
  for (const falsy of [false, 0, 'false', '0']) {
    const normalised = normaliseCallback({ success: falsy, id: '1', status: 'REJECTED' });
    assert.ok(normalised.ok);
    assert.equal(normalised.event.success, false);
  }
});

test('a date-time without offset is read as UTC and marked', () => {
  const normalised = normaliseCallback({ success: true, id: '1', updated: '2024-05-01 10:00:00' });
  assert.ok(normalised.ok);
  assert.equal(normalised.event.updated, '2024-05-01T10:00:00.000Z');
  assert.equal(normalised.event.updated_assumed_utc, true);
  const withOffset = normaliseCallback({ success: true, id: '1', updated: '2024-05-01T10:00Z' });
  assert.ok(withOffset.ok);
  assert.equal(withOffset.event.updated_assumed_utc, undefined);
  const spoofed = normaliseCallback({
    success: true,
    id: '1',
    updated: '2024-05-01T10:00:00Z',
    updated_assumed_utc: true,
  });
  assert.ok(spoofed.ok);
  assert.equal(spoofed.event.updated_assumed_utc, undefined, 'the mark is ferry’s alone');
});

test('date-time forms are normalised to UTC ISO', () => {
  const cases: [string, string, boolean][] = [
    ['2024-05-01T10:00:00+02:00', '2024-05-01T08:00:00.000Z', false],
    ['2024-05-01T10:00:00+0200', '2024-05-01T08:00:00.000Z', false],
    ['2024-05-01T10:00:00-05', '2024-05-01T15:00:00.000Z', false],
    ['2024-05-01T10:00:00.123456Z', '2024-05-01T10:00:00.123Z', false],
    ['2024-05-01t10:00:00,5z', '2024-05-01T10:00:00.500Z', false],
    ['2024-05-01T10:00', '2024-05-01T10:00:00.000Z', true],
    ['2024-05-01 10:00:00', '2024-05-01T10:00:00.000Z', true],
  ];
  for (const [input, iso, assumedUtc] of cases) {
    assert.deepEqual(normaliseDateTime('updated', input), { iso, assumedUtc }, input);
  }
  for (const wrong of ['yesterday', '2024-13-01T00:00:00Z', '01.05.2024 10:00', 1714550400]) {
    assert.throws(() => normaliseDateTime('updated', wrong), String(wrong));
  }
});

test('replies: datetimes and file sizes normalised, each reply marked on its own', () => {
  const normalised = normaliseCallback({
    success: true,
    id: '1',
    status: 'REPLIED',
    replies: [
      { datetime: '2024-05-01T10:00:01+02:00', message: 'Yes' },
      { datetime: '2024-05-01 10:00:02', media: { url: 'https://m/1.jpg', filesize: '12345' } },
    ],
  });
  assert.ok(normalised.ok);
  assert.deepEqual(normalised.event.replies, [
    { datetime: '2024-05-01T08:00:01.000Z', message: 'Yes' },
    {
      datetime: '2024-05-01T10:00:02.000Z',
      datetime_assumed_utc: true,
      media: { url: 'https://m/1.jpg', filesize: 12345 },
    },
  ]);
});

test('null means absent; unknown fields are kept in order', () => {
  const normalised = normaliseCallback({
    success: true,
    id: null,
    msg_id: 77,
    error: null,
    custom: { a: [1] },
    duration: '42',
    reply: 7,
  });
  assert.ok(normalised.ok);
  assert.deepEqual(normalised.event, {
    success: true,
    msg_id: '77',
    custom: { a: [1] },
    duration: 42,
    reply: '7',
  });
  assert.deepEqual(normalised.key, { field: 'msg_id', key: '77' });
});

test('what cannot be a status event says why', () => {
  const cases: [Record<string, unknown>, RegExp][] = [
    [{ id: '1', status: 'DELIVERED' }, /success: is required/],
    [{ success: 'yes', id: '1' }, /success/],
    [{ success: true, status: 'DELIVERED' }, /none of id, msg_id, request_id/],
    [{ success: true, id: '', msg_id: null }, /none of id/],
    [{ success: true, id: { nested: 1 } }, /id: must be a string or a number/],
    [{ success: true, id: '1', duration: 'long' }, /duration/],
    [{ success: true, id: '1', updated: 'yesterday' }, /updated/],
    [{ success: true, id: '1', replies: {} }, /replies/],
    [{ success: true, id: '1', replies: [{ media: { url: 5 } }] }, /replies\.0\.media\.url/],
  ];
  for (const [callback, reason] of cases) {
    const normalised = normaliseCallback(callback);
    assert.equal(normalised.ok, false, JSON.stringify(callback));
    if (!normalised.ok) assert.match(normalised.reason, reason, JSON.stringify(callback));
  }
});
