/**
 * The urgent lane on its worker thread, steered from the main thread: an operator's pause
 * holds its commands until resumed, its log lines reach the main logger's destination,
 * a gateway's Retry-After answered to the bulk lane holds the urgent lane too, and a stop
 * drains it and ends the thread.
 */
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { createLogger } from '../../src/observability/logger.ts';
import { kcatWrite, untilResults } from '../helpers/dedupe-copies.ts';
import { startEmulator, startFerry, testTopics } from '../helpers/ferry.ts';

function capturingLogger() {
  const lines: string[] = [];
  const logger = createLogger({
    level: 'info',
    destination: new Writable({
      write(chunk: Buffer | string, _encoding, done) {
        lines.push(chunk.toString());
        done();
      },
    }),
  });
  return { logger, lines };
}

async function until(what: string, check: () => boolean, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    assert.ok(Date.now() < deadline, `timed out waiting for ${what}`);
    await sleep(20);
  }
}

test('the urgent lane on its thread is paused and resumed with the bulk lane, logs where the main logger does, and stops with the process', {
  timeout: 90_000,
}, async (t) => {
  const emulator = await startEmulator(t);
  const topics = testTopics();
  const urgentTopic = `${topics.commands}.urgent`;
  const { logger, lines } = capturingLogger();
  const ferry = await startFerry(
    t,
    emulator,
    { FERRY_TOPIC_COMMANDS_URGENT: urgentTopic, FERRY_TOPIC_PARTITIONS: '2' },
    topics,
    logger,
  );
  const lanes = ferry.daemon.pipeline;
  assert.ok(lanes.urgent?.running, 'the urgent lane runs once the daemon started');
  assert.ok(
    lines.some((line) => line.includes('"lane":"urgent"')),
    "the urgent lane's lines reach the main logger's destination",
  );

  lanes.pause('operator');
  assert.equal(lanes.urgent?.state().paused, true, 'the pause shows at once');
  await kcatWrite(urgentTopic, [70_001]);
  await sleep(2_000);
  assert.equal(emulator.stats().sendsById['70001'], undefined, 'nothing sent while paused');
  assert.equal(lanes.urgent?.state().paused, true, "the thread's own state says paused too");
  lanes.resume();
  const results = await untilResults(topics.results, 1, 20_000);
  assert.equal(results[0]?.key, '70001');
  assert.equal(emulator.stats().sendsById['70001'], 1);

  assert.equal(await ferry.daemon.stop(), true, 'both lanes drained');
  assert.equal(lanes.urgent?.running, false, 'the thread ended');
});

test("a gateway's Retry-After answered to the bulk lane holds the urgent lane's sends too", {
  timeout: 90_000,
}, async (t) => {
  const emulator = await startEmulator(t, { knobs: { http429Rate: 1, retryAfterMs: 3_000 } });
  const topics = testTopics();
  const urgentTopic = `${topics.commands}.urgent`;
  await startFerry(t, emulator, { FERRY_TOPIC_COMMANDS_URGENT: urgentTopic }, topics);
  await kcatWrite(topics.commands, [80_001]);
  await until(
    'the bulk command answered 429',
    () => (emulator.stats().faults.http429Rate ?? 0) > 0,
  );
  const heldAt = Date.now();
  emulator.setKnobs({ http429Rate: 0 });
  await kcatWrite(urgentTopic, [80_002]);
  await until('the urgent command sent', () => emulator.stats().sendsById['80002'] === 1, 30_000);
  const waited = Date.now() - heldAt;
  t.diagnostic(`the urgent command went out ${waited} ms after the bulk lane's 429`);
  assert.ok(waited >= 2_000, `the urgent lane waited for the hold (${waited} ms)`);
  await untilResults(topics.results, 2, 30_000);
});

test("a replica started into a paused fleet starts its urgent lane paused, and the fleet's resume reaches it", {
  timeout: 90_000,
}, async (t) => {
  const emulator = await startEmulator(t);
  const topics = testTopics();
  const urgentTopic = `${topics.commands}.urgent`;
  const env = { FERRY_TOPIC_COMMANDS_URGENT: urgentTopic, FERRY_TOPIC_PARTITIONS: '2' };
  const first = await startFerry(t, emulator, env, topics);
  await first.daemon.fleet.setDesired('paused', 'urgent lane test');
  await first.daemon.stop();

  const second = await startFerry(t, emulator, env, topics);
  const urgent = second.daemon.pipeline.urgent;
  await sleep(1_000);
  assert.equal(urgent?.state().desired, 'paused', "the worker's own state, a second after start");
  await kcatWrite(urgentTopic, [91_001]);
  await sleep(2_500);
  assert.equal(
    emulator.stats().sendsById['91001'],
    undefined,
    'nothing sent while the fleet is paused',
  );
  await second.daemon.fleet.setDesired('running', 'urgent lane test');
  await until('the urgent command sent', () => emulator.stats().sendsById['91001'] === 1, 20_000);
});
