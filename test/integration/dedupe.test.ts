/**
 * Duplicate suppression by command id, end to end: commands are written two or three
 * times with kcat (librdkafka), each copy keyed by the id so that it lands on the first's
 * partition; two ferry processes share the group, one is killed with SIGKILL and started
 * again. The emulator counts what reached the gateway per id, and kcat reads every result
 * back at read_committed.
 */
import assert from 'node:assert/strict';
import { type TestContext, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Emulator } from '../../src/emulator/index.ts';
import {
  assertOneSendPerId,
  kcatCommands,
  kcatResults,
  kcatWrite,
  untilResults,
} from '../helpers/dedupe-copies.ts';
import { startEmulator, startFerry, testTopics } from '../helpers/ferry.ts';
import { type FerryProcess, spawnFerry, waitForLog } from '../helpers/ferry-process.ts';
import { kcatReadAll } from '../helpers/kcat.ts';

const PARTITIONS = 2;
/** Longer than it takes kcat to write a copy, shorter than ferry's request timeout (2 s). */
const GATEWAY_LATENCY_MS = 1_500;
/** How long the gateway holds the answer to a send whose replica is killed meanwhile. */
const HELD_ANSWER_MS = 5_000;

/** Polls until `check` holds; fails with `what` after `timeoutMs`. */
async function until(what: string, check: () => boolean, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await sleep(10);
  }
}

/** The JSON log lines of a ferry process with message `msg`. */
function logLines(ferry: FerryProcess, msg: string): Record<string, unknown>[] {
  return ferry
    .output()
    .split('\n')
    .filter((line) => line.includes(`"msg":"${msg}"`))
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

/** The partitions a replica was given at its last join. */
function assigned(ferry: FerryProcess): number[] {
  const last = logLines(ferry, 'partitions assigned').at(-1);
  return (last?.partitions as number[] | undefined) ?? [];
}

/** Waits until the replicas' last assignments split the partitions between them, each a share. */
async function settled(replicas: readonly FerryProcess[]): Promise<void> {
  await until(
    'the group settled with a share of the partitions each',
    () => {
      const shares = replicas.map(assigned);
      const all = shares.flat();
      return (
        shares.every((share) => share.length > 0) &&
        all.length === PARTITIONS &&
        new Set(all).size === PARTITIONS
      );
    },
    60_000,
  );
}

/** The ids of the partition's dedupe records a replica read back at its takeovers. */
function readBack(ferry: FerryProcess, partition: number): number[] {
  return logLines(ferry, 'dedupe records read back')
    .filter((line) => line.partition === partition)
    .map((line) => Number(line.ids));
}

/** `ferry_duplicates_total{source}` of a running replica, from its /metrics. */
async function duplicatesCounted(ferry: FerryProcess, source: string): Promise<number> {
  const port = logLines(ferry, 'ferry is running')[0]?.opsPort;
  const text = await (await fetch(`http://127.0.0.1:${String(port)}/metrics`)).text();
  const line = text
    .split('\n')
    .find((l) => l.startsWith(`ferry_duplicates_total{source="${source}"}`));
  return Number(line?.split(' ').at(-1) ?? Number.NaN);
}

async function startReplica(t: TestContext, env: Record<string, string>): Promise<FerryProcess> {
  const ferry = spawnFerry(t, env);
  await waitForLog(ferry, 'ferry is running', 60_000);
  return ferry;
}

/**
 * Topics (the dedupe topic too) made by an in-process ferry that stops at once, and the
 * environment of ferry processes on them.
 */
async function processSetup(t: TestContext, emulator: Emulator, env: Record<string, string> = {}) {
  const topics = testTopics();
  const setup = await startFerry(
    t,
    emulator,
    { FERRY_TOPIC_PARTITIONS: String(PARTITIONS), ...env },
    topics,
  );
  await setup.daemon.stop();
  return { topics, env: { ...setup.env, FERRY_HTTP_PORT: '0' } };
}

test('each copy of a command gets its own result and the gateway gets the command once: copies seconds apart, while the first is at the gateway, after a kill -9 and after a restart', {
  timeout: 90_000,
}, async (t) => {
  const emulator = await startEmulator(t);
  const { topics, env } = await processSetup(t, emulator);
  const [a, b] = await Promise.all([startReplica(t, env), startReplica(t, env)]);
  await settled([a, b]);
  let written = 0;

  // Seconds apart: the first is answered and committed before its copy is written.
  const apart = [1_001, 1_002, 1_003, 1_004];
  await kcatWrite(topics.commands, apart);
  written += apart.length;
  await untilResults(topics.results, written);
  await sleep(1_500);
  await kcatWrite(topics.commands, apart);
  written += apart.length;
  await untilResults(topics.results, written);

  // While the first is at the gateway, its answer 1.5 s away: the copy waits for it
  // instead of going out beside it.
  const during = [2_001, 2_002, 2_003, 2_004];
  emulator.setKnobs({ latencyMs: GATEWAY_LATENCY_MS });
  await kcatWrite(topics.commands, during);
  written += during.length;
  await until('the firsts at the gateway', () =>
    during.every((id) => emulator.stats().sendsById[String(id)] === 1),
  );
  await kcatWrite(topics.commands, during);
  written += during.length;
  await untilResults(topics.results, written);
  emulator.setKnobs({ latencyMs: 0 });
  const waited =
    (await duplicatesCounted(a, 'in_flight')) + (await duplicatesCounted(b, 'in_flight'));
  assert.ok(waited > 0, 'some copies were answered from a first still on its way');
  t.diagnostic(`copies answered from a first on its way: ${waited} of ${during.length}`);

  // After a kill -9 of the replica that sent the first: firsts answered and committed,
  // then their replica is killed; the copies on its partition wait for the other replica's
  // takeover, which reads the dedupe topic back.
  const killed = [3_001, 3_002, 3_003, 3_004, 3_005, 3_006];
  await kcatWrite(topics.commands, killed);
  written += killed.length;
  await untilResults(topics.results, written);
  // And a first still at the gateway when its replica dies: the new owner finds it there
  // with a status lookup instead of sending it again, and its copy is answered from that.
  const inDoubt = 4_001;
  emulator.setKnobs({ latencyMs: HELD_ANSWER_MS });
  await kcatWrite(topics.commands, [inDoubt]);
  written += 1;
  const partitionOf = new Map(
    (await kcatCommands(topics.commands)).map((c) => [Number(c.key), c.partition]),
  );
  const victimPartition = partitionOf.get(inDoubt) as number;
  assert.ok(
    killed.some((id) => partitionOf.get(id) === victimPartition),
    'some of the committed firsts are on the partition of the replica to be killed',
  );
  const [victim, survivor] = assigned(a).includes(victimPartition) ? [a, b] : [b, a];
  const readBackBefore = readBack(survivor, victimPartition).length;
  await until(
    'the in-doubt first at the gateway',
    () => emulator.stats().sendsById[String(inDoubt)] === 1,
  );
  victim.child.kill('SIGKILL');
  await victim.exited();
  emulator.setKnobs({ latencyMs: 0 });
  await kcatWrite(topics.commands, [...killed, inDoubt]);
  written += killed.length + 1;
  await untilResults(topics.results, written, 45_000);
  const takeovers = readBack(survivor, victimPartition).slice(readBackBefore);
  assert.ok(
    takeovers.length > 0 && takeovers.every((ids) => ids > 0),
    `the survivor read the killed replica's ids back at its takeover (${takeovers.join(', ')})`,
  );

  // After a restart: the killed replica starts again, the group gives it a share, and
  // third copies are handled after that rebalance, on both partitions.
  const restarted = await startReplica(t, env);
  await settled([restarted, survivor]);
  const third = [...apart, ...killed];
  await kcatWrite(topics.commands, third);
  written += third.length;
  await untilResults(topics.results, written, 45_000);
  const restartedOwns = assigned(restarted)[0] as number;
  assert.ok(
    readBack(restarted, restartedOwns).some((ids) => ids > 0),
    'the restarted replica read its partition’s ids back',
  );
  // Long enough for a result written twice to show.
  await sleep(1_500);

  const ids = [...apart, ...during, ...killed, inDoubt];
  const commands = await kcatCommands(topics.commands);
  assert.equal(commands.length, written);
  assertOneSendPerId({
    emulator,
    commands,
    results: await kcatResults(topics.results),
    ids,
    answeredInFlight: new Set([...during, inDoubt]),
    reconciled: new Set([inDoubt]),
  });
  assert.deepEqual(await kcatReadAll(topics.dlq), [], 'no dead letters');
});

test('with FERRY_DEDUPE=false a copy of a command is sent again', async (t) => {
  const emulator = await startEmulator(t);
  const { topics } = await startFerry(t, emulator, { FERRY_DEDUPE: 'false' });
  await kcatWrite(topics.commands, [9_001]);
  await untilResults(topics.results, 1);
  await kcatWrite(topics.commands, [9_001]);
  const results = await untilResults(topics.results, 2);
  assert.equal(emulator.stats().sendsById['9001'], 2, 'the gateway got it twice');
  assert.deepEqual(
    results.map((r) => ({ success: r.value.success, code: r.value.code })),
    [
      { success: true, code: undefined },
      { success: true, code: undefined },
    ],
  );
});
