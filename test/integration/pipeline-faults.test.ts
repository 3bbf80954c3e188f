import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { freePort } from '../../tools/kafka/broker.ts';
import { smsOperation } from '../fixtures/operations.ts';
import {
  command,
  produce,
  readRecords,
  startEmulator,
  startFerry,
  TEST_API_KEY,
} from '../helpers/ferry.ts';

const sms = (id: number) => smsOperation(id);

const faults = [
  { knob: 'http500Rate', name: 'HTTP 500' },
  { knob: 'timeoutRate', name: 'timeouts' },
  { knob: 'malformedRate', name: 'a body that is not JSON' },
  { knob: 'missingItemRate', name: 'a missing item' },
] as const;

for (const { knob, name } of faults) {
  test(`${name} on every attempt: retried, then stage transport and a dead letter`, async (t) => {
    const emulator = await startEmulator(t, { knobs: { [knob]: 1, hangMs: 5_000 } });
    const ferry = await startFerry(t, emulator, {
      FERRY_MAX_ATTEMPTS: '3',
      FERRY_REQUEST_TIMEOUT_MS: '300',
    });
    const ids = [101, 102, 103];
    await produce(
      t,
      ids.map((id) => command(ferry.topics.commands, sms(id))),
    );
    const results = await readRecords(t, ferry.topics.results, ids.length);
    for (const result of results) {
      assert.equal(result.value.success, false);
      assert.equal(result.value.stage, 'transport');
      assert.equal(result.value.attempts, 3);
      assert.equal(typeof result.value.error, 'string');
      // Each fault comes after the gateway got the request, and the final lookup fails
      // the same way: nobody can tell whether the command went out.
      assert.equal(result.value.delivery, 'in_doubt');
    }
    const deadLetters = await readRecords(t, ferry.topics.dlq, ids.length);
    assert.deepEqual(deadLetters.map((d) => d.key).sort(), ids.map(String).sort());
    for (const dead of deadLetters) {
      assert.equal(dead.record.headers['ferry-source-topic'], ferry.topics.commands);
      assert.ok(dead.record.headers['ferry-error']);
      assert.equal(dead.record.headers['ferry-delivery'], 'in_doubt');
      assert.equal(dead.value.type, 'sms', 'the original record value is kept');
    }
  });
}

test('a gateway that refuses connections: the commands are proven unsent, without a lookup', async (t) => {
  const emulator = await startEmulator(t);
  const closedPort = await freePort();
  const ferry = await startFerry(t, emulator, {
    FERRY_SYNC_BASE_URL: `http://127.0.0.1:${closedPort}`,
    FERRY_MAX_ATTEMPTS: '2',
  });
  await produce(t, [command(ferry.topics.commands, sms(111))]);
  const [result] = await readRecords(t, ferry.topics.results, 1);
  assert.equal(result?.value.stage, 'transport');
  assert.equal(result?.value.delivery, 'unsent');
  const [dead] = await readRecords(t, ferry.topics.dlq, 1);
  assert.equal(dead?.record.headers['ferry-delivery'], 'unsent');
});

test('answers lost on every attempt: the final lookup finds the command delivered, no dead letter', async (t) => {
  const emulator = await startEmulator(t, { knobs: { lostAnswerRate: 1 } });
  const ferry = await startFerry(t, emulator, {
    FERRY_MAX_ATTEMPTS: '2',
    FERRY_REQUEST_TIMEOUT_MS: '400',
    FERRY_TOPIC_PARTITIONS: '1',
  });
  await produce(t, [command(ferry.topics.commands, sms(121))]);
  // The send and the retry's lookup both lose their answers; the answer to the final
  // lookup, a request timeout later, comes through.
  for (let i = 0; i < 500 && emulator.stats().requests < 2; i++) await sleep(5);
  emulator.setKnobs({ lostAnswerRate: 0 });
  const [result] = await readRecords(t, ferry.topics.results, 1);
  assert.equal(result?.value.success, true);
  assert.equal(result?.value.reconciled, true);
  assert.equal(result?.value.stage, 'upstream');
  assert.equal(emulator.stats().sendsById['121'], 1, 'sent once');
  const dead = await readRecords(t, ferry.topics.dlq, 1, { timeoutMs: 3_000 }).catch(() => []);
  assert.equal(dead.length, 0);
});

test('a fault that heals within the attempts ends in success, with the attempts counted', async (t) => {
  const emulator = await startEmulator(t, { knobs: { http500Rate: 1 } });
  const ferry = await startFerry(t, emulator, {
    FERRY_MAX_ATTEMPTS: '20',
    FERRY_RETRY_BASE_MS: '100',
    FERRY_RETRY_MAX_MS: '200',
    FERRY_TOPIC_PARTITIONS: '1',
  });
  await produce(t, [command(ferry.topics.commands, sms(201))]);
  await sleep(500);
  emulator.setKnobs({ http500Rate: 0 });
  const [result] = await readRecords(t, ferry.topics.results, 1);
  assert.equal(result?.value.success, true);
  assert.ok(Number(result?.value.attempts) > 1, 'took more than one attempt');
  assert.equal(emulator.stats().sendsById['201'], 1, 'accepted once');
});

test('Access denied stops sending, loses nothing, and the flow resumes once the key is fixed', async (t) => {
  const emulator = await startEmulator(t);
  emulator.setApiKey('the-key-was-rotated');
  const ferry = await startFerry(t, emulator, { FERRY_ACCESS_DENIED_RETRY_MS: '0' });
  const ids = [301, 302, 303, 304];
  await produce(
    t,
    ids.map((id) => command(ferry.topics.commands, sms(id))),
  );
  for (
    let i = 0;
    i < 100 && !ferry.daemon.pipeline.state().pauseReasons.includes('access_denied');
    i++
  ) {
    await sleep(50);
  }
  const state = ferry.daemon.pipeline.state();
  assert.deepEqual(state.pauseReasons, ['access_denied']);
  assert.equal(state.lastError, 'Access denied');
  const denied = await ferry.metrics.registry.getSingleMetricAsString(
    'ferry_gateway_access_denied',
  );
  assert.match(denied, /ferry_gateway_access_denied 1/);
  // An envelope sent alongside the denied one (another fetch's batch) may still land
  // after the pause shows: a storm is requests that keep coming.
  await sleep(300);
  const requestsWhileDenied = emulator.stats().requests;
  await sleep(1_000);
  assert.equal(emulator.stats().requests, requestsWhileDenied, 'no retry storm while stopped');

  emulator.setApiKey(TEST_API_KEY);
  ferry.daemon.pipeline.resume();
  const results = await readRecords(t, ferry.topics.results, ids.length, { settleMs: 1000 });
  assert.equal(results.length, ids.length, 'exactly one result per command');
  assert.ok(
    results.every((r) => r.value.success === true),
    'no command failed for the bad key',
  );
  assert.equal(ferry.daemon.pipeline.state().paused, false);
});

test('after Access denied, sending is tried again by itself after the configured interval', async (t) => {
  const emulator = await startEmulator(t);
  emulator.setApiKey('rotated');
  const ferry = await startFerry(t, emulator, { FERRY_ACCESS_DENIED_RETRY_MS: '500' });
  await produce(t, [command(ferry.topics.commands, sms(401))]);
  await sleep(300);
  emulator.setApiKey(TEST_API_KEY);
  const [result] = await readRecords(t, ferry.topics.results, 1);
  assert.equal(result?.value.success, true);
});

test('the ferry-transport header sends a command through the async endpoint', async (t) => {
  const emulator = await startEmulator(t);
  const ferry = await startFerry(t, emulator);
  await produce(t, [
    command(ferry.topics.commands, sms(501), { 'ferry-transport': 'async' }),
    command(ferry.topics.commands, sms(502), { 'ferry-transport': 'carrier-pigeon' }),
  ]);
  const results = await readRecords(t, ferry.topics.results, 2);
  const asyncResult = results.find((r) => r.key === '501')?.value;
  assert.equal(asyncResult?.transport, 'async');
  assert.equal(asyncResult?.success, true);
  assert.equal(typeof asyncResult?.request_id, 'string');
  assert.equal(asyncResult?.msg_id, undefined);
  const bad = results.find((r) => r.key === '502')?.value;
  assert.deepEqual([bad?.success, bad?.stage], [false, 'validation']);
  assert.match(String(bad?.error), /^ferry-transport: /);
});

test('an operator pause holds commands until resume, then each gets its result', async (t) => {
  const emulator = await startEmulator(t);
  const ferry = await startFerry(t, emulator);
  ferry.daemon.pipeline.pause('operator');
  await produce(t, [command(ferry.topics.commands, sms(601))]);
  await sleep(1_000);
  assert.equal(emulator.stats().requests, 0, 'nothing sent while paused');
  ferry.daemon.pipeline.resume();
  const [result] = await readRecords(t, ferry.topics.results, 1);
  assert.equal(result?.value.success, true);
});
