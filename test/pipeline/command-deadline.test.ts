/**
 * A command's deadline: read from its `ferry-expires-at` header or its type's default,
 * and kept by the dispatcher, which never lets a command out after it, whatever it
 * waited for (a retry's backoff, a lookup). Real HTTP to the emulator.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { InboundRecord } from '../../src/kafka/kafka-port.ts';
import { deadLetterRecord } from '../../src/pipeline/bounded-records.ts';
import { readCommand } from '../../src/pipeline/command.ts';
import { deadlineOf, isPast, parseRfc3339 } from '../../src/pipeline/command-deadline.ts';
import { sendResult } from '../../src/pipeline/result.ts';
import { validOperations } from '../fixtures/operations.ts';
import { dispatcherAgainstEmulator, outboundSms } from '../helpers/dispatcher.ts';

test('ferry-expires-at is read as RFC 3339 with an offset, nothing looser', () => {
  assert.equal(parseRfc3339('2026-11-27T12:03:10Z'), Date.UTC(2026, 10, 27, 12, 3, 10));
  assert.equal(parseRfc3339('2026-11-27t12:03:10z'), Date.UTC(2026, 10, 27, 12, 3, 10));
  assert.equal(parseRfc3339('2026-11-27 12:03:10.250Z'), Date.UTC(2026, 10, 27, 12, 3, 10, 250));
  assert.equal(parseRfc3339('2026-11-27T13:03:10+01:00'), Date.UTC(2026, 10, 27, 12, 3, 10));
  assert.equal(
    parseRfc3339('2026-11-27T12:03:10.123456789-00:30'),
    Date.UTC(2026, 10, 27, 12, 33, 10, 123),
  );
  for (const wrong of [
    '2026-11-27T12:03:10', // no offset: whose clock?
    '2026-11-27',
    '1795780990000',
    '2026-02-30T00:00:00Z', // Date.parse would roll it over to March
    '2026-11-27T24:00:00Z',
    'tomorrow',
    '',
  ]) {
    assert.equal(parseRfc3339(wrong), undefined, wrong);
  }
});

test('a deadline comes from the header first, else the type default, else the * default, from the record timestamp', () => {
  const defaults = new Map([
    ['telegram', 60_000],
    ['*', 600_000],
  ]);
  const at = '2026-11-27T12:03:10Z';
  assert.deepEqual(deadlineOf({ 'ferry-expires-at': at }, '1000', 'telegram', defaults), {
    atMs: Date.parse(at),
    source: 'header',
  });
  assert.deepEqual(deadlineOf({}, '1000', 'telegram', defaults), {
    atMs: 61_000,
    source: 'default',
  });
  assert.deepEqual(deadlineOf({}, '1000', 'sms', defaults), { atMs: 601_000, source: 'default' });
  assert.equal(deadlineOf({}, '1000', 'sms', new Map()), undefined);
  assert.equal(deadlineOf({}, '1000', 'balance', defaults), undefined, '* covers messages only');
  assert.deepEqual(deadlineOf({}, '1000', 'call/otp', defaults), {
    atMs: 601_000,
    source: 'default',
  });
  assert.equal(deadlineOf({}, '-1', 'sms', defaults), undefined, 'no timestamp to count from');
  assert.match(
    String(
      (deadlineOf({ 'ferry-expires-at': 'soon' }, '1', 'sms', defaults) as { error: string }).error,
    ),
    /RFC 3339/,
  );
  assert.equal(isPast(undefined, Date.now()), false);
  assert.equal(isPast(10, 10), true);
  assert.equal(isPast(11, 10), false);
});

function record(headers: Record<string, string>, timestamp = '1000'): InboundRecord {
  return {
    topic: 'ferry.commands',
    partition: 0,
    offset: '7',
    key: Buffer.from('k'),
    value: Buffer.from(JSON.stringify(validOperations.telegram)),
    headers,
    timestamp,
  };
}

test('a command with a wrong ferry-expires-at is a validation result, never sent', () => {
  const options = { defaultTransport: 'sync', transports: new Set(['sync'] as const) } as const;
  const wrong = readCommand(record({ 'ferry-expires-at': 'in five minutes' }), options);
  assert.equal(wrong.kind, 'invalid');
  assert.equal(wrong.kind === 'invalid' && wrong.rule, 'expires_header');
  assert.equal(wrong.kind === 'invalid' && wrong.unreadable, false);
  const right = readCommand(record({ 'ferry-expires-at': '2026-11-27T12:03:10Z' }), options);
  assert.equal(right.kind === 'valid' && right.deadline?.source, 'header');
  const defaulted = readCommand(record({}), {
    ...options,
    expireAfterMs: new Map([['telegram', 300_000]]),
  });
  assert.deepEqual(defaulted.kind === 'valid' && defaulted.deadline, {
    atMs: 301_000,
    source: 'default',
  });
});

test('an expired result says so, with its deadline, and its dead letter carries a defaulted deadline for replay', () => {
  const options = {
    defaultTransport: 'sync',
    transports: new Set(['sync'] as const),
    expireAfterMs: new Map([['telegram', 300_000]]),
  } as const;
  const command = readCommand(record({}), options);
  assert.equal(command.kind, 'valid');
  if (command.kind !== 'valid') return;
  const result = sendResult(command, { kind: 'expired', deadlineMs: 301_000, attempts: 0 });
  assert.equal(result.success, false);
  assert.equal(result.code, 'expired');
  assert.equal(result.stage, 'validation');
  assert.equal(result.expires_at, '1970-01-01T00:05:01.000Z');
  assert.match(String(result.error), /deadline 1970-01-01T00:05:01.000Z passed/);
  // A command sent within its deadline says which one it had.
  const sent = sendResult(command, {
    kind: 'item',
    item: { success: true, data: { id: 1, msg_id: 'm', parts: 1 } },
    attempts: 1,
  } as never);
  assert.equal(sent.expires_at, '1970-01-01T00:05:01.000Z');

  const letter = deadLetterRecord(
    'dlq',
    record({}),
    'gave up',
    1 << 20,
    'unsent',
    'transport',
    result.expires_at,
  );
  assert.equal(letter.headers?.['ferry-expires-at'], '1970-01-01T00:05:01.000Z');
  const own = deadLetterRecord(
    'dlq',
    record({ 'ferry-expires-at': '2026-11-27T12:03:10+01:00' }),
    'gave up',
    1 << 20,
    'unsent',
    'transport',
    '2026-11-27T11:03:10.000Z',
  );
  assert.equal(
    own.headers?.['ferry-expires-at'],
    '2026-11-27T12:03:10+01:00',
    'its own header, as written',
  );
});

test('the dispatcher sends nothing past its deadline: not at first, not after a retry’s wait', async (t) => {
  const { dispatcher, emulator } = await dispatcherAgainstEmulator(t);
  const [late, lateOutcome] = outboundSms(801, { deadlineMs: Date.now() - 1 });
  const [onTime, onTimeOutcome] = outboundSms(802, { deadlineMs: Date.now() + 60_000 });
  dispatcher.dispatch({ transport: 'sync', items: [late, onTime] });
  assert.deepEqual((await lateOutcome).kind, 'expired');
  assert.deepEqual((await onTimeOutcome).kind, 'item');

  // Its first attempt is answered 503 with Retry-After (1 s): the gateway may have taken
  // it, so after the wait it is looked up (the gateway is well again by then), found
  // unknown there, and, its deadline passed meanwhile, not sent.
  emulator.setKnobs({ http503Rate: 1, retryAfterMs: 1_000 });
  const [retried, retriedOutcome] = outboundSms(803, { deadlineMs: Date.now() + 300 });
  dispatcher.dispatch({ transport: 'sync', items: [retried] });
  await sleep(100);
  emulator.setKnobs({ http503Rate: 0 });
  const outcome = await retriedOutcome;
  assert.equal(outcome.kind, 'expired');
  assert.ok(outcome.kind === 'expired' && outcome.attempts >= 1, 'its requests counted');
  assert.ok((emulator.stats().statusLookupsById['803'] ?? 0) >= 1, 'looked up after the 503');

  // Handed over in doubt and past its deadline: looked up first; unknown there, so it
  // ends expired instead of going out.
  const [doubtful, doubtfulOutcome] = outboundSms(804, {
    inDoubt: true,
    deadlineMs: Date.now() - 1,
  });
  dispatcher.dispatch({ transport: 'sync', items: [doubtful] });
  assert.equal((await doubtfulOutcome).kind, 'expired');
  assert.ok(
    (emulator.stats().statusLookupsById['804'] ?? 0) >= 1,
    'looked up before it was let go',
  );

  assert.deepEqual(emulator.stats().sendsById, { '802': 1 }, 'only the command on time went out');
});

test('a command that cannot be looked up, past its deadline after an attempt that may have arrived, ends in doubt, not sent again', async (t) => {
  const { dispatcher, emulator } = await dispatcherAgainstEmulator(t, {
    latencyMs: 300,
    requestTimeoutMs: 100,
  });
  const [item, settled] = outboundSms(901, { deadlineMs: Date.now() + 50, reconcilable: false });
  dispatcher.dispatch({ transport: 'sync', items: [item] });
  const outcome = await settled;
  assert.equal(outcome.kind, 'transport');
  assert.equal(outcome.kind === 'transport' && outcome.delivery, 'in_doubt');
  assert.equal(outcome.kind === 'transport' && outcome.attempts, 1);
  await new Promise((resolve) => setTimeout(resolve, 400));
  assert.equal(emulator.stats().sendsById['901'], 1, 'the one attempt, never a second');
});

test('a send without a numeric id handed over in doubt and past its deadline ends in doubt, never expired', async (t) => {
  // Its earlier owner may have sent it (its send intent covered it) and nothing can look
  // it up: `expired` would claim it never went out.
  const { dispatcher, emulator } = await dispatcherAgainstEmulator(t);
  const [item, settled] = outboundSms(951, {
    inDoubt: true,
    reconcilable: false,
    deadlineMs: Date.now() - 1,
  });
  dispatcher.dispatch({ transport: 'sync', items: [item] });
  const outcome = await settled;
  assert.equal(outcome.kind, 'transport');
  assert.equal(outcome.kind === 'transport' && outcome.delivery, 'in_doubt');
  assert.equal(emulator.stats().sendsById['951'], undefined, 'not sent again');
});
