/**
 * A partition that stops moving says so: a command written with kcat (librdkafka, not
 * kafkajs) meets a gateway that takes 6 s to answer, and ferry, a real child process
 * with FERRY_STALL_WARN_MS at 1.5 s, logs a `partition stalled` warning naming the
 * partition and where its batch waits (handed out, its answers not all in), then says
 * the partition moves again once the answer came and the result committed.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { FIXTURE_PHONE, smsOperation } from '../fixtures/operations.ts';
import { readRecords, startEmulator, startFerry, testTopics } from '../helpers/ferry.ts';
import { spawnFerry, waitForLog } from '../helpers/ferry-process.ts';
import { kcatWrite } from '../helpers/fleet.ts';
import { testBrokers } from '../helpers/kafka.ts';

const STALLED = 'partition stalled: commands read and nothing of it committed';
const MOVING = 'partition moving again: its commands commit';

function logLines(output: string, message: string): Record<string, unknown>[] {
  return output
    .split('\n')
    .filter((line) => line.includes(`"msg":"${message}"`))
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

test('a partition waiting on a slow gateway is logged as stalled with its step, then as moving again', {
  timeout: 90_000,
}, async (t) => {
  const emulator = await startEmulator(t, { knobs: { latencyMs: 6_000 } });
  // An in-process ferry creates the topics and stops; the one under test is a process.
  const setup = await startFerry(t, emulator, {}, testTopics());
  await setup.daemon.stop();
  const ferry = spawnFerry(t, {
    ...setup.env,
    FERRY_STALL_WARN_MS: '1500',
    FERRY_REQUEST_TIMEOUT_MS: '20000',
    FERRY_KAFKA_SESSION_TIMEOUT_MS: '30000',
  });
  await waitForLog(ferry, 'ferry is running');

  await kcatWrite(
    testBrokers().join(','),
    setup.topics.commands,
    '4242',
    JSON.stringify(smsOperation(4242)),
  );
  await waitForLog(ferry, STALLED, 20_000);
  const [warning] = logLines(ferry.output(), STALLED);
  assert.ok(warning);
  assert.equal(warning.level, 'warn');
  assert.equal(typeof warning.partition, 'number');
  assert.ok(Number(warning.waitingMs) >= 1500, `waited ${String(warning.waitingMs)} ms`);
  const lane = warning.lane as { step?: string; turn?: boolean };
  assert.match(lane.step ?? '', /^handed out offsets 0-0$/, JSON.stringify(warning));
  assert.deepEqual(warning.commits, { queued: 1, oldestReady: false });
  assert.equal((warning.ownership as { takenOver?: boolean }).takenOver, true);
  assert.equal(warning.fetchingPaused, false);
  assert.equal((warning.envelopes as { inFlight?: number }).inFlight, 1);
  // Nothing personal in it: the phone number is in the command, not in the warning.
  assert.ok(!JSON.stringify(warning).includes(String(FIXTURE_PHONE)));

  // The gateway answers after its 6 s: the result commits and the partition moves again.
  const [result] = await readRecords(t, setup.topics.results, 1, { settleMs: 200 });
  assert.equal(result?.key, '4242');
  await waitForLog(ferry, MOVING, 10_000);
  assert.equal(logLines(ferry.output(), MOVING)[0]?.partition, warning.partition);
  ferry.child.kill('SIGTERM');
  assert.equal(await ferry.exited(), 0, ferry.output());
});
