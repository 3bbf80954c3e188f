import assert from 'node:assert/strict';
import { test } from 'node:test';
import { freePort } from '../../tools/kafka/broker.ts';
import { smsOperation } from '../fixtures/operations.ts';
import { command, produce, readRecords, startEmulator, startFerry } from '../helpers/ferry.ts';

// The whole way of a message: command → result (msg_id or request_id) → gateway callback → status event.
test('a sent command ends as a result and then a status event, sync and async', async (t) => {
  const httpPort = await freePort();
  const publicUrl = `http://127.0.0.1:${httpPort}`;
  const emulator = await startEmulator(t, { knobs: { callbackDelayMs: 100 } });
  const ferry = await startFerry(t, emulator, {
    FERRY_HTTP_PORT: String(httpPort),
    FERRY_CALLBACK_PUBLIC_URL: publicUrl,
    FERRY_CALLBACK_TOKEN: 'status-flow-token',
  });
  const sms = (id: number) => smsOperation(id);
  await produce(t, [
    command(ferry.topics.commands, sms(901)),
    command(ferry.topics.commands, sms(902), { 'ferry-transport': 'async' }),
  ]);
  const results = await readRecords(t, ferry.topics.results, 2);
  const syncResult = results.find((r) => r.key === '901')?.value;
  const asyncResult = results.find((r) => r.key === '902')?.value;
  assert.equal(typeof syncResult?.msg_id, 'string');
  assert.equal(typeof asyncResult?.request_id, 'string');

  const events = await readRecords(t, ferry.topics.status, 2, { settleMs: 1_000 });
  assert.equal(events.length, 2, 'one status event per message');
  const syncEvent = events.find((e) => e.key === '901')?.value;
  const asyncEvent = events.find((e) => e.key === '902')?.value;
  assert.equal(syncEvent?.msg_id, syncResult?.msg_id, 'the event names the message of the result');
  assert.equal(syncEvent?.success, true);
  assert.equal(asyncEvent?.request_id, asyncResult?.request_id);
  assert.equal(typeof syncEvent?.received_at, 'string');
  const callbacks = await ferry.metrics.registry.getSingleMetricAsString('ferry_callbacks_total');
  assert.match(callbacks, /outcome="published"\} 2/);
});
