/**
 * `template/create` answers with the identifier the gateway gave the new template, whatever
 * `id` the command carried. Read as an id mismatch, that answer was a retryable transport
 * failure: the template was created again on every retry. It must settle on the first answer.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { answerIdOf, readSyncResponse } from '../../src/contract/index.ts';
import { FerryError } from '../../src/errors.ts';
import type { Outbound, SendOutcome } from '../../src/pipeline/send-outcome.ts';
import { smsOperation } from '../fixtures/operations.ts';
import { dispatcherAgainstEmulator } from '../helpers/dispatcher.ts';

function outbound(operation: Record<string, unknown>): [Outbound, Promise<SendOutcome>] {
  let settle: (outcome: SendOutcome) => void = () => undefined;
  const settled = new Promise<SendOutcome>((resolve) => {
    settle = resolve;
  });
  const item: Outbound = {
    json: JSON.stringify(operation),
    id: operation.id,
    type: operation.type as Outbound['type'],
    reconcilable: false,
    inDoubt: false,
    isCurrent: () => true,
    settle,
  };
  return [item, settled];
}

test('the answer id of a created template is not compared with the command id', () => {
  const body = JSON.stringify({
    success: true,
    data: [{ success: true, data: { id: '1', name: 'otp', text: 'Code {code}' } }],
  });
  assert.throws(
    () => readSyncResponse(body, [7]),
    (error: unknown) => error instanceof FerryError && error.code === 'transport',
    'compared as an echoed id, the answer looks like another operation',
  );
  const answer = readSyncResponse(body, [answerIdOf('template/create', 7)]);
  assert.equal(answer.kind, 'items');
  assert.equal(answerIdOf('template/viber/create', 7), undefined);
  assert.equal(answerIdOf('sms', 7), 7, 'sends still check the echoed id');
});

test('template/create with an id is sent once and settles with the gateway id', async (t) => {
  const { dispatcher, emulator } = await dispatcherAgainstEmulator(t);
  const [template, templateOutcome] = outbound({
    type: 'template/create',
    id: 7,
    name: 'otp',
    template: 'Code {code}',
  });
  const [sms, smsOutcome] = outbound(smsOperation(8));
  dispatcher.dispatch({ transport: 'sync', items: [template, sms] });
  const created = await templateOutcome;
  assert.equal(created.kind, 'item', JSON.stringify(created));
  if (created.kind !== 'item') return;
  assert.equal(created.attempts, 1);
  assert.equal(created.item.success, true);
  assert.notEqual((created.item as { data: { id: unknown } }).data.id, 7);
  assert.equal((await smsOutcome).kind, 'item');
  assert.equal(emulator.stats().requests, 1, 'one request: no retry, no second template');
});
