import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { settledAt, stampSettled } from '../../src/pipeline/outcome-times.ts';
import type { SendOutcome } from '../../src/pipeline/send-outcome.ts';

test('an outcome keeps the time it first became known, however often its result is built', async () => {
  const outcome: SendOutcome = { kind: 'accepted', requestId: 'r', attempts: 1 };
  assert.equal(settledAt(outcome), undefined);
  assert.equal(stampSettled(outcome), outcome);
  const first = settledAt(outcome);
  assert.ok(first);
  await sleep(5);
  stampSettled(outcome);
  assert.equal(settledAt(outcome), first, 'a second stamp changes nothing');
  assert.equal(stampSettled(undefined), undefined);
});
