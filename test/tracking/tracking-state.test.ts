/** Each transition of one partition's tracking state, and what `due` makes of it. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { SeenCallback, SentMessage } from '../../src/tracking/tracking-records.ts';
import { TrackingState } from '../../src/tracking/tracking-state.ts';

const T0 = Date.parse('2026-11-27T12:00:00Z');
const limits = { pollAfterMs: 60_000, giveUpAfterMs: 3_600_000, orphanAfterMs: 60_000 };

function sent(id: string, extra: Partial<SentMessage> = {}): SentMessage {
  return {
    id,
    msgId: `m${id}`,
    key: `id:${id}`,
    type: 'sms',
    sentAt: new Date(T0).toISOString(),
    command: { topic: 'commands', partition: 0, offset: id },
    lookup: true,
    ...extra,
  };
}

function callback(ids: { id?: string; msgId?: string }, status = 'DELIVERED'): SeenCallback {
  const key = ids.id !== undefined ? `id:${ids.id}` : `msg:${ids.msgId}`;
  return { ...ids, key, event: { status, success: status === 'DELIVERED' } };
}

test('sentRead: a message waits; nothing is due before its poll time', () => {
  const state = new TrackingState(limits);
  state.sentRead(sent('1'));
  assert.equal(state.pending, 1);
  const due = state.due(T0 + 1_000);
  assert.deepEqual(due, { answered: [], toPoll: [], givenUp: [], orphans: [] });
});

test('callbackRead: a callback for a sent message finalizes it from the callback', () => {
  const state = new TrackingState(limits);
  state.sentRead(sent('1'));
  state.callbackRead(callback({ id: '1' }), T0);
  const due = state.due(T0 + 1_000);
  assert.equal(due.answered.length, 1);
  assert.equal(due.answered[0]?.message.id, '1');
});

test('callbackRead: a callback naming only the msg_id finds its message', () => {
  const state = new TrackingState(limits);
  state.sentRead(sent('1'));
  state.callbackRead(callback({ msgId: 'm1' }), T0);
  assert.equal(state.due(T0).answered[0]?.message.key, 'id:1');
});

test('callbackRead: a callback read before its message waits for it, then is answered', () => {
  const state = new TrackingState(limits);
  state.callbackRead(callback({ id: '1' }), T0);
  assert.deepEqual(state.due(T0 + 1_000).answered, []);
  assert.deepEqual(state.due(T0 + 1_000).orphans, []);
  state.sentRead(sent('1'));
  assert.equal(state.due(T0 + 2_000).answered.length, 1);
});

test('callbackRead: a callback no message claims within orphanAfterMs is dropped', () => {
  const state = new TrackingState(limits);
  state.callbackRead(callback({ id: '9' }), T0);
  assert.equal(state.due(T0 + 59_999).orphans.length, 0);
  assert.equal(state.due(T0 + 60_000).orphans.length, 1);
});

test('callbackRead: two callbacks of one message answer it once', () => {
  const state = new TrackingState(limits);
  state.sentRead(sent('1'));
  state.callbackRead(callback({ id: '1' }), T0);
  state.callbackRead(callback({ msgId: 'm1' }, 'READ'), T0);
  assert.equal(state.due(T0).answered.length, 1);
});

test('due: a message without a callback is polled at its poll time, and given up at the last bound', () => {
  const state = new TrackingState(limits);
  state.sentRead(sent('1'));
  state.sentRead(sent('2', { lookup: false }));
  const at = state.due(T0 + 60_000);
  assert.deepEqual(
    at.toPoll.map((m) => m.id),
    ['1'],
  );
  assert.deepEqual(
    state.due(T0 + 3_600_000).givenUp.map((m) => m.id),
    ['1', '2'],
  );
});

test('polled: a message whose status is not final is asked again a poll interval later', () => {
  const state = new TrackingState(limits);
  state.sentRead(sent('1'));
  state.polled('id:1', T0 + 60_000);
  assert.equal(state.due(T0 + 119_999).toPoll.length, 0);
  assert.equal(state.due(T0 + 120_000).toPoll.length, 1);
});

test('finalized: a committed final status ends its tracking and its callback', () => {
  const state = new TrackingState(limits);
  state.sentRead(sent('1'));
  state.callbackRead(callback({ id: '1' }), T0);
  state.finalized('id:1', 'id:1');
  assert.equal(state.pending, 0);
  assert.equal(state.heldCallbacks, 0);
  assert.deepEqual(state.due(T0 + 3_600_000), {
    answered: [],
    toPoll: [],
    givenUp: [],
    orphans: [],
  });
});

test('finalizedRead: tombstones read back (a previous owner finalized) end tracking too', () => {
  const state = new TrackingState(limits);
  state.sentRead(sent('1'));
  state.callbackRead(callback({ id: '1' }), T0);
  state.finalizedRead('sent', 'id:1');
  state.finalizedRead('callback', 'id:1');
  assert.equal(state.isPending('id:1'), false);
  assert.equal(state.heldCallbacks, 0);
  // A late repeat of the callback is held, claimed by nothing, and dropped in time.
  state.callbackRead(callback({ id: '1' }), T0 + 1_000);
  assert.equal(state.due(T0 + 2_000).answered.length, 0);
  assert.equal(state.due(T0 + 61_000).orphans.length, 1);
});

test('sentCommitted: committed messages count toward the bound until read back, never below zero', () => {
  const state = new TrackingState(limits);
  state.sentCommitted(3);
  assert.equal(state.waiting, 3, 'counted before any record is read');
  assert.equal(state.pending, 0);
  state.sentRead(sent('1'));
  state.sentRead(sent('2'));
  assert.equal(state.waiting, 3, 'a record read back moves from unread to pending');
  assert.equal(state.pending, 2);
  state.finalized('id:1');
  assert.equal(state.waiting, 2);
  // Records of an earlier owner count off too: the count errs low, never negative.
  state.sentRead(sent('3'));
  state.sentRead(sent('4'));
  assert.equal(state.waiting, 3, 'pending 3, unread 0');
  state.sentCommitted(-5);
  assert.equal(state.waiting, 3, 'a negative count adds nothing');
});
