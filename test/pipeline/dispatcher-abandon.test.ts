/**
 * What the dispatcher says about a command it gives up on without an answer: the batch
 * read again decides from it whether to look the command up before sending it.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Outbound } from '../../src/pipeline/send-outcome.ts';
import { dispatcherAgainstEmulator, outboundSms } from '../helpers/dispatcher.ts';

function dispatcherFor(t: import('node:test').TestContext) {
  return dispatcherAgainstEmulator(t);
}

test('a command in doubt, given up before its lookup, is still reported as maybe sent', async (t) => {
  const { dispatcher, emulator } = await dispatcherFor(t);
  const [doubtful, doubtfulOutcome] = outboundSms(1, { inDoubt: true, current: false });
  const [fresh, freshOutcome] = outboundSms(2, { inDoubt: false, current: false });
  dispatcher.dispatch({ transport: 'sync', items: [doubtful, fresh] });
  assert.deepEqual(await doubtfulOutcome, { kind: 'abandoned', sent: true });
  assert.deepEqual(await freshOutcome, { kind: 'abandoned', sent: false });
  assert.equal(emulator.stats().requests, 0, 'nothing went out for a partition no longer owned');
});

test('a command still owned is sent once and answered', async (t) => {
  const { dispatcher, emulator } = await dispatcherFor(t);
  const [outbound, outcome] = outboundSms(3, { inDoubt: false, current: true });
  dispatcher.dispatch({ transport: 'sync', items: [outbound] });
  assert.equal((await outcome).kind, 'item');
  assert.equal(emulator.stats().sendsById['3'], 1);
});

test('an envelope whose only commands in doubt were given up sends the rest without an empty lookup', async (t) => {
  const { dispatcher, emulator } = await dispatcherFor(t);
  // The envelope's first attempt loses its answer (every request of the emulator does),
  // so both are to be looked up; before the retry one of them moves to another replica.
  emulator.setKnobs({ lostAnswerRate: 1 });
  let owned = true;
  const [moved, movedOutcome] = outboundSms(41, { inDoubt: true, current: true });
  const movedItem: Outbound = { ...moved, isCurrent: () => owned };
  const [stays, staysOutcome] = outboundSms(42, { inDoubt: false, current: true });
  const staysItem: Outbound = { ...stays, reconcilable: false };
  dispatcher.dispatch({ transport: 'sync', items: [movedItem, staysItem] });
  for (let i = 0; i < 200 && emulator.stats().requests < 1; i++) {
    await new Promise((r) => setTimeout(r, 5));
  }
  owned = false;
  emulator.setKnobs({ lostAnswerRate: 0 });
  assert.deepEqual(await movedOutcome, { kind: 'abandoned', sent: true });
  const outcome = await staysOutcome;
  assert.equal(outcome.kind, 'item', JSON.stringify(outcome));
});
