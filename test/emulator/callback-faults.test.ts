/**
 * The emulator's callback faults, driven with curl (a client ferry did not write): a
 * share of the final-state callbacks dropped, sent twice or sent late, while a `status`
 * lookup finds every message's final state whatever happened to its callback.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:http';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import {
  type AnswerTimesStats,
  SMALL_ENVELOPE_OPERATIONS,
} from '../../src/emulator/answer-times.ts';
import { SYNC_PATH } from '../../src/emulator/emulator.ts';
import { findTool } from '../deploy/external-tools.ts';
import { smsOperation } from '../fixtures/operations.ts';
import { startEmulator, TEST_API_KEY } from '../helpers/ferry.ts';

const execFileAsync = promisify(execFile);

async function curlJson(url: string, body?: unknown): Promise<Record<string, unknown>> {
  const { stdout } = await execFileAsync(
    findTool('curl'),
    [
      ...['-sS', '--fail-with-body', '--max-time', '10', url],
      ...(body === undefined
        ? []
        : ['-H', 'Content-Type: application/json', '--data-binary', JSON.stringify(body)]),
    ],
    { timeout: 15_000 },
  );
  return JSON.parse(stdout) as Record<string, unknown>;
}

const MESSAGES = 200;
const LATE_MS = 1_500;

test('callbacks dropped, doubled and late, set and sent through curl; status still finds every final state', {
  timeout: 60_000,
}, async (t) => {
  const arrivals = new Map<string, number[]>();
  const receiver = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => {
      body += chunk.toString('utf8');
    });
    request.on('end', () => {
      const id = String((JSON.parse(body) as { id?: unknown }).id);
      arrivals.set(id, [...(arrivals.get(id) ?? []), Date.now()]);
      response.end('ok');
    });
  });
  receiver.listen(0, '127.0.0.1');
  await once(receiver, 'listening');
  t.after(() => receiver.close());
  const hook = `http://127.0.0.1:${(receiver.address() as { port: number }).port}/hook`;

  const emulator = await startEmulator(t);
  const knobs = await curlJson(`${emulator.url}/__emulator/knobs`, {
    callbackDelayMs: 20,
    callbackDropRate: 0.2,
    callbackDuplicateRate: 0.2,
    callbackLateRate: 0.2,
    callbackLateMs: LATE_MS,
  });
  assert.equal(knobs.callbackDropRate, 0.2);
  const ids = Array.from({ length: MESSAGES }, (_, i) => 5_000 + i);
  const sentAt = Date.now();
  const answer = await curlJson(`${emulator.url}${SYNC_PATH}`, {
    auth: TEST_API_KEY,
    data: ids.map((id) => smsOperation(id, { hook })),
  });
  assert.equal(answer.success, true);
  await sleep(LATE_MS + 1_500);

  const stats = await curlJson(`${emulator.url}/__emulator/stats?sendsById=0`);
  // The envelope curl sent is in the emulator's own answer times, in its size class.
  const answerTimes = stats.answerTimes as AnswerTimesStats;
  const sizeClass = MESSAGES <= SMALL_ENVELOPE_OPERATIONS ? answerTimes.small : answerTimes.large;
  assert.equal(sizeClass.count, 1);
  assert.ok(sizeClass.maxMs >= 0 && sizeClass.maxMs < 10_000, JSON.stringify(sizeClass));
  const dropped = stats.callbacksDropped as number;
  const doubled = stats.callbacksDuplicated as number;
  const late = stats.callbacksLate as number;
  t.diagnostic(`dropped ${dropped}, doubled ${doubled}, late ${late} of ${MESSAGES}`);
  for (const count of [dropped, doubled, late]) {
    assert.ok(count > MESSAGES * 0.1 && count < MESSAGES * 0.3, `about a fifth each: ${count}`);
  }
  const never = ids.filter((id) => !arrivals.has(String(id)));
  const twice = ids.filter((id) => (arrivals.get(String(id))?.length ?? 0) === 2);
  const afterLate = ids.filter((id) =>
    (arrivals.get(String(id)) ?? []).some((at) => at - sentAt >= LATE_MS),
  );
  assert.equal(never.length, dropped, 'the dropped ones never arrived');
  assert.equal(twice.length, doubled, 'the doubled ones arrived twice');
  assert.equal(afterLate.length, late, 'the late ones arrived after callbackLateMs');
  assert.ok(
    ids.every((id) => (arrivals.get(String(id))?.length ?? 0) <= 2),
    'none more than twice',
  );

  // The lookup a poller would make: every message's final state, callback or not.
  const lookups = await curlJson(`${emulator.url}${SYNC_PATH}`, {
    auth: TEST_API_KEY,
    data: never.map((id) => ({ type: 'status', id })),
  });
  const items = lookups.data as { success: boolean; data?: { status?: string } }[];
  assert.equal(items.length, never.length);
  for (const item of items) {
    assert.equal(item.success, true);
    assert.match(String(item.data?.status), /^(DELIVERED|READ|REPLIED|UNDELIVERED)$/);
  }
});

test('callbacks held through curl are queued, none sent, until released', {
  timeout: 30_000,
}, async (t) => {
  let arrived = 0;
  const receiver = createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      arrived += 1;
      response.end('ok');
    });
  });
  receiver.listen(0, '127.0.0.1');
  await once(receiver, 'listening');
  t.after(() => receiver.close());
  const hook = `http://127.0.0.1:${(receiver.address() as { port: number }).port}/hook`;
  const emulator = await startEmulator(t, { knobs: { callbackDelayMs: 10 } });

  assert.deepEqual(await curlJson(`${emulator.url}/__emulator/callbacks`, { held: true }), {
    success: true,
    held: true,
  });
  const ids = Array.from({ length: 20 }, (_, i) => 7_000 + i);
  await curlJson(`${emulator.url}${SYNC_PATH}`, {
    auth: TEST_API_KEY,
    data: ids.map((id) => smsOperation(id, { hook })),
  });
  await sleep(500);
  assert.equal(arrived, 0, 'none sent while held');
  const heldStats = await curlJson(`${emulator.url}/__emulator/stats?sendsById=0`);
  assert.equal(heldStats.callbacksPending, ids.length);

  await curlJson(`${emulator.url}/__emulator/callbacks`, { held: false });
  for (let waited = 0; arrived < ids.length && waited < 5_000; waited += 50) await sleep(50);
  assert.equal(arrived, ids.length, 'all sent once released');

  await assert.rejects(
    curlJson(`${emulator.url}/__emulator/callbacks`, { held: 'yes' }),
    (error: { stdout?: string }) => /held: must be true or false/.test(String(error.stdout)),
  );
});
