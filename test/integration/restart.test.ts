import assert from 'node:assert/strict';
import { type TestContext, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Emulator } from '../../src/emulator/index.ts';
import { smsOperation } from '../fixtures/operations.ts';
import {
  command,
  produce,
  readRecords,
  startEmulator,
  startFerry,
  testTopics,
} from '../helpers/ferry.ts';
import { spawnFerry, waitForLog } from '../helpers/ferry-process.ts';

const sms = (id: number) => smsOperation(id);

function assertExactlyOnePerCommand(keys: readonly string[], ids: readonly number[]): void {
  const counts = new Map<string, number>();
  for (const key of keys) counts.set(key, (counts.get(key) ?? 0) + 1);
  const missing = ids.filter((id) => !counts.has(String(id)));
  const duplicated = [...counts].filter(([, n]) => n > 1).map(([key]) => key);
  assert.deepEqual({ missing, duplicated }, { missing: [], duplicated: [] });
  assert.equal(keys.length, ids.length);
}

/**
 * Topics and an environment for ferry child processes: an in-process instance
 * creates the topics and stops at once. Small envelopes, two in flight, small fetches
 * and a small read-ahead keep work in flight long enough to stop in the middle of it.
 */
async function processSetup(t: TestContext, emulator: Emulator) {
  const setup = await startFerry(t, emulator, {}, testTopics());
  await setup.daemon.stop();
  const env = {
    ...setup.env,
    FERRY_HTTP_PORT: '0',
    FERRY_BATCH_MAX_OPS: '20',
    FERRY_CONCURRENCY: '2',
    FERRY_KAFKA_MAX_BYTES_PER_PARTITION: '4096',
    // Fetching does not wait for the batches before it: this bounds how far ahead it reads.
    FERRY_MAX_COMMANDS_IN_FLIGHT: '80',
  };
  return { setup, env };
}

test('SIGTERM mid-stream drains, commits and exits 0; a restart finishes the rest, one result each', async (t) => {
  const emulator = await startEmulator(t, { knobs: { latencyMs: 150 } });
  const { setup, env } = await processSetup(t, emulator);

  const ids = Array.from({ length: 600 }, (_, i) => 10_000 + i);
  // Small produce calls make small record batches, so a fetch does not take everything at once.
  for (let i = 0; i < ids.length; i += 20) {
    await produce(
      t,
      ids.slice(i, i + 20).map((id) => command(setup.topics.commands, sms(id))),
    );
  }

  const first = spawnFerry(t, env);
  await waitForLog(first, 'ferry is running');
  await sleep(700);
  first.child.kill('SIGTERM');
  assert.equal(await first.exited(), 0, first.output());
  assert.match(first.output(), /"drained":true,"msg":"stopped"/);
  const sentByFirst = emulator.stats().operations;
  assert.ok(
    sentByFirst > 0 && sentByFirst < ids.length,
    `stopped mid-stream (${sentByFirst} sent)`,
  );

  const second = spawnFerry(t, env);
  await waitForLog(second, 'ferry is running');
  const results = await readRecords(t, setup.topics.results, ids.length, { settleMs: 1500 });
  assertExactlyOnePerCommand(
    results.map((r) => r.key),
    ids,
  );
  assert.equal(emulator.stats().duplicates.length, 0, 'a graceful restart sends nothing twice');
  second.child.kill('SIGTERM');
  assert.equal(await second.exited(), 0);
});

test('kill -9 mid-stream loses no command and commits no second result', async (t) => {
  const emulator = await startEmulator(t, { knobs: { latencyMs: 40 } });
  const { setup, env } = await processSetup(t, emulator);

  const ids = Array.from({ length: 600 }, (_, i) => 20_000 + i);
  await produce(
    t,
    ids.map((id) => command(setup.topics.commands, sms(id))),
  );

  const first = spawnFerry(t, env);
  await waitForLog(first, 'ferry is running');
  await sleep(700);
  // Kill while an envelope is at the gateway: processed there, its answer not back yet.
  emulator.setKnobs({ slowAnswerRate: 1, slowAnswerMs: 3_000 });
  const requestsBefore = emulator.stats().requests;
  while (emulator.stats().requests === requestsBefore) await sleep(5);
  first.child.kill('SIGKILL');
  await first.exited();
  emulator.setKnobs({ slowAnswerRate: 0 });

  const second = spawnFerry(t, env);
  await waitForLog(second, 'ferry is running');
  // read_committed: results of the transactions the killed process did not finish never show.
  const results = await readRecords(t, setup.topics.results, ids.length, { settleMs: 1500 });
  assertExactlyOnePerCommand(
    results.map((r) => r.key),
    ids,
  );
  // The killed replica's send intent made its in-flight commands "in doubt": the
  // new owner looked them up with `status` instead of sending them again.
  assert.deepEqual(emulator.stats().duplicates, [], 'no command reached the gateway twice');
  assert.ok(
    results.some((r) => r.value.reconciled === true),
    'some results came from the status lookup',
  );
  second.child.kill('SIGTERM');
  assert.equal(await second.exited(), 0);
});

test('a missing required variable stops ferry with one line naming it', async (t) => {
  const ferry = spawnFerry(t, { FERRY_SYNC_BASE_URL: 'http://127.0.0.1:1' });
  assert.equal(await ferry.exited(), 1);
  assert.equal(ferry.output().trim(), 'ferry: configuration error: FERRY_API_KEY: is required');
});
