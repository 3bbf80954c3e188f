import assert from 'node:assert/strict';
import { test } from 'node:test';
import { SendGate } from '../../src/pipeline/send-gate.ts';

test('send gate opens only when every reason is released', async () => {
  const gate = new SendGate();
  assert.equal(gate.close('operator'), true);
  assert.equal(gate.close('operator'), false, 'closing twice for one reason is a no-op');
  gate.close('access_denied');
  let woke = false;
  const waiting = gate.whenOpen().then(() => {
    woke = true;
  });
  gate.release('operator');
  await Promise.resolve();
  assert.equal(woke, false);
  assert.deepEqual(gate.reasons, ['access_denied']);
  gate.release('access_denied');
  await waiting;
  assert.equal(gate.open, true);
});

test('a waiter leaves when its signal aborts', async () => {
  const gate = new SendGate();
  gate.close('operator');
  const abort = new AbortController();
  const waiting = gate.whenOpen(abort.signal);
  abort.abort(new Error('stopping'));
  await assert.rejects(waiting, /stopping/);
});

test('listeners see every change', () => {
  const gate = new SendGate();
  const seen: string[][] = [];
  gate.onChange((reasons) => seen.push([...reasons]));
  gate.close('operator');
  gate.release();
  assert.deepEqual(seen, [['operator'], []]);
});
