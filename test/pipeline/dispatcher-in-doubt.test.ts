/**
 * `ferry_commands_in_doubt` as the dispatcher keeps it: a takeover's lookups count while
 * they are asked, a command handed over in doubt counts until its lookup settles it, and
 * nothing is left counted once every command has its outcome. Real HTTP to the emulator.
 */
import assert from 'node:assert/strict';
import { type TestContext, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { FerryMetrics } from '../../src/observability/metrics.ts';
import type { Outbound, SendOutcome } from '../../src/pipeline/send-outcome.ts';
import { smsOperation } from '../fixtures/operations.ts';
import { dispatcherAgainstEmulator } from '../helpers/dispatcher.ts';

function dispatcherFor(t: TestContext, latencyMs: number) {
  return dispatcherAgainstEmulator(t, { latencyMs, requestTimeoutMs: 5_000 });
}

async function inDoubt(metrics: FerryMetrics): Promise<number | undefined> {
  return (await metrics.commandsInDoubt.get()).values[0]?.value;
}

function item(id: number, inDoubtAtStart: boolean): [Outbound, Promise<SendOutcome>] {
  let settle: (outcome: SendOutcome) => void = () => undefined;
  const settled = new Promise<SendOutcome>((resolve) => {
    settle = resolve;
  });
  return [
    {
      json: JSON.stringify(smsOperation(id)),
      id,
      type: 'sms',
      reconcilable: true,
      inDoubt: inDoubtAtStart,
      isCurrent: () => true,
      settle,
    },
    settled,
  ];
}

test('a takeover lookup counts its commands in doubt while it is asked', async (t) => {
  const { dispatcher, metrics } = await dispatcherFor(t, 400);
  assert.equal(await inDoubt(metrics), 0);
  const asked = dispatcher.lookUp([
    { id: 501, type: 'sms' },
    { id: 502, type: 'sms' },
    { id: 503, type: 'sms' },
  ]);
  await sleep(100);
  assert.equal(await inDoubt(metrics), 3);
  const answers = await asked;
  assert.deepEqual(
    answers?.map((answer) => answer.kind),
    ['unsent', 'unsent', 'unsent'],
  );
  assert.equal(await inDoubt(metrics), 0);
});

test('a command handed over in doubt counts until its lookup proves it unsent', async (t) => {
  const { dispatcher, metrics, emulator } = await dispatcherFor(t, 400);
  const [doubtful, doubtfulOutcome] = item(601, true);
  const [fresh, freshOutcome] = item(602, false);
  dispatcher.dispatch({ transport: 'sync', items: [doubtful, fresh] });
  await sleep(100);
  assert.equal(await inDoubt(metrics), 1, 'only the command that may have been sent');
  const outcomes = await Promise.all([doubtfulOutcome, freshOutcome]);
  assert.deepEqual(
    outcomes.map((outcome) => outcome.kind),
    ['item', 'item'],
  );
  assert.equal(await inDoubt(metrics), 0);
  assert.equal(emulator.stats().sendsById['601'], 1, 'looked up, not found, sent once');
});

test('a command handed over in doubt whose lookups all fail ends in doubt, never unsent', async (t) => {
  // An earlier send of it may have reached the gateway; a later send of its envelope
  // never went out. Only a lookup may call it unsent, and every lookup failed.
  const { dispatcher, emulator } = await dispatcherAgainstEmulator(t, { retryAfterMaxMs: 20 });
  emulator.setKnobs({ http503Rate: 1 });
  const [doubtful, doubtfulOutcome] = item(701, true);
  const [fresh, freshOutcome] = item(702, false);
  dispatcher.dispatch({ transport: 'sync', items: [doubtful, fresh] });
  const [first, second] = await Promise.all([doubtfulOutcome, freshOutcome]);
  assert.equal(first.kind, 'transport');
  assert.equal(first.kind === 'transport' && first.delivery, 'in_doubt');
  assert.equal(second.kind, 'transport');
  assert.equal(second.kind === 'transport' && second.delivery, 'unsent', 'never sent at all');
  assert.equal(emulator.stats().sendsById['701'], undefined);
});
