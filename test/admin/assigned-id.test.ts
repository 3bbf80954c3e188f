import assert from 'node:assert/strict';
import { test } from 'node:test';
import { assignedMessageId } from '../../src/admin/assigned-id.ts';

const LOWEST = 2n ** 52n;
const HIGHEST = 2n ** 53n - 1n;

test('an assigned id lies in [2^52, 2^53 - 1], both ends reachable', () => {
  assert.equal(
    assignedMessageId(() => new Uint8Array(8)),
    LOWEST,
  );
  assert.equal(
    assignedMessageId(() => new Uint8Array(8).fill(0xff)),
    HIGHEST,
  );
  for (let i = 0; i < 1000; i++) {
    const id = assignedMessageId();
    assert.ok(id >= LOWEST && id <= HIGHEST, String(id));
  }
});

test('assigned ids differ from one call to the next', () => {
  const ids = new Set(Array.from({ length: 1000 }, () => assignedMessageId()));
  assert.equal(ids.size, 1000);
});
