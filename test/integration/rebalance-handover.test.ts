/**
 * A partition that moves between two live replicas at a rebalance. Idle at its old
 * owner: the old owner clears its send intent when the rebalance begins. With commands at
 * the gateway: the old owner waits for their answers and commits them before it rejoins
 * (the group waits for it), then clears its intent. Either way the new owner neither
 * waits out sends nor asks the gateway about the commands that follow. Without that,
 * every command after the move up to the intent's reach was looked up first (`status`),
 * after a wait of a request timeout + 2 s.
 */
import assert from 'node:assert/strict';
import { type TestContext, test } from 'node:test';
import { kcatWrite, untilResults } from '../helpers/dedupe-copies.ts';
import { processEnv, startEmulator, testTopics } from '../helpers/ferry.ts';
import { spawnFerry, waitForLog } from '../helpers/ferry-process.ts';
import { testBrokers } from '../helpers/kafka.ts';

/**
 * The emulator, a group on a 2-partition topic and its first replica, taken over. The
 * session is the request timeout + 4 s (start-up wants the request timeout below it).
 */
async function firstReplica(
  t: TestContext,
  {
    requestTimeoutMs,
    extraEnv = {},
  }: { requestTimeoutMs: number; extraEnv?: Record<string, string> },
) {
  const emulator = await startEmulator(t);
  const topics = testTopics();
  const env = {
    ...processEnv(topics, emulator, {
      brokers: testBrokers().join(','),
      clientId: `${topics.group}-client`,
    }),
    FERRY_TOPIC_PARTITIONS: '2',
    FERRY_REQUEST_TIMEOUT_MS: String(requestTimeoutMs),
    FERRY_KAFKA_SESSION_TIMEOUT_MS: String(requestTimeoutMs + 4_000),
    FERRY_SHUTDOWN_GRACE_MS: '3000',
    ...extraEnv,
  };
  const first = spawnFerry(t, env);
  await waitForLog(first, 'the partitions of the first assignment are taken over', 60_000);
  return { emulator, topics, env, first };
}

/** Waits up to 20 s until `done` holds, given whether an id reached the gateway exactly once. */
async function untilGateway(
  emulator: Awaited<ReturnType<typeof startEmulator>>,
  what: string,
  done: (sentOnce: (id: number) => boolean) => boolean,
): Promise<void> {
  const sentOnce = (id: number) => emulator.stats().sendsById[String(id)] === 1;
  const deadline = Date.now() + 20_000;
  while (!done(sentOnce)) {
    assert.ok(Date.now() < deadline, what);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** The new owner waited out no send of the old one, asked the gateway about nothing, and each id went out once. */
function assertNothingWaitedOrLookedUp(
  second: ReturnType<typeof spawnFerry>,
  emulator: Awaited<ReturnType<typeof startEmulator>>,
  ids: readonly number[],
): void {
  assert.ok(
    !second.output().includes('taking over commands that may have reached the gateway'),
    'the new owner found no send of the old one to wait out',
  );
  assert.deepEqual(
    emulator.stats().statusLookupsById,
    {},
    'the gateway was asked about no command',
  );
  for (const id of ids) {
    assert.equal(emulator.stats().sendsById[String(id)], 1, `command ${id} sent once`);
  }
}

test('a partition idle at its old owner moves at a rebalance without a wait or a lookup', {
  timeout: 120_000,
}, async (t) => {
  const { emulator, topics, env } = await firstReplica(t, { requestTimeoutMs: 2_000 });
  // Commands on both partitions, committed with this replica's intents reaching ahead.
  const before = [91_001, 91_002, 91_003, 91_004, 91_005, 91_006, 91_007, 91_008];
  await kcatWrite(topics.commands, before);
  await untilResults(topics.results, before.length);

  // A second replica joins: the group moves a partition to it.
  const second = spawnFerry(t, env);
  await waitForLog(second, 'the partitions of the first assignment are taken over', 60_000);
  const assigned = second
    .output()
    .split('\n')
    .filter((line) => line.includes('"partitions assigned"'))
    .map((line) => (JSON.parse(line) as { partitions: number[] }).partitions);
  assert.ok(
    assigned.at(-1)?.length === 1,
    `the second replica owns one partition: ${JSON.stringify(assigned)}`,
  );
  const after = [91_011, 91_012, 91_013, 91_014, 91_015, 91_016, 91_017, 91_018];
  await kcatWrite(topics.commands, after);
  await untilResults(topics.results, before.length + after.length);

  assertNothingWaitedOrLookedUp(second, emulator, [...before, ...after]);
});

test('a partition whose commands are at the gateway when a rebalance begins is committed before its old owner rejoins: the new owner waits for nothing', {
  timeout: 120_000,
}, async (t) => {
  const { emulator, topics, env, first } = await firstReplica(t, { requestTimeoutMs: 4_000 });
  const warm = [92_001, 92_002, 92_003, 92_004];
  await kcatWrite(topics.commands, warm);
  await untilResults(topics.results, warm.length);

  // Commands on both partitions held at the gateway while a second replica starts and
  // joins (the first learns of the rebalance about 1–2.5 s after the spawn; an answer
  // that came first leaves the partition idle, the other test's case).
  emulator.setKnobs({ latencyMs: 2_500 });
  const held = [92_011, 92_012, 92_013, 92_014, 92_015, 92_016];
  await kcatWrite(topics.commands, held);
  await untilGateway(emulator, 'the held commands reached the gateway', (sent) => held.every(sent));
  const second = spawnFerry(t, env);
  await waitForLog(second, 'the partitions of the first assignment are taken over', 60_000);
  emulator.setKnobs({ latencyMs: 0 });
  await untilResults(topics.results, warm.length + held.length);
  const after = [92_021, 92_022, 92_023, 92_024, 92_025, 92_026];
  await kcatWrite(topics.commands, after);
  await untilResults(topics.results, warm.length + held.length + after.length);

  assert.ok(
    first.output().includes('rebalance: what was in flight is settled; rejoining'),
    'the old owner rejoined once its batches at the gateway were answered and committed',
  );
  assertNothingWaitedOrLookedUp(second, emulator, [...warm, ...held, ...after]);
});

test('a batch whose envelopes still wait to be sent when a rebalance begins goes out whole and commits: nothing is left to the new owner', {
  timeout: 120_000,
}, async (t) => {
  // One command per envelope, one envelope at the gateway at a time: the others of a
  // batch wait in the send queue. Given up at the rebalance, they would leave their batch
  // half sent, so it could not commit and its partition kept its intent.
  const { emulator, topics, env, first } = await firstReplica(t, {
    requestTimeoutMs: 4_000,
    extraEnv: { FERRY_BATCH_MAX_OPS: '1', FERRY_CONCURRENCY: '1' },
  });
  const warm = [93_001, 93_002];
  await kcatWrite(topics.commands, warm);
  await untilResults(topics.results, warm.length);

  emulator.setKnobs({ latencyMs: 1_200 });
  const queued = [93_011, 93_012, 93_013, 93_014, 93_015, 93_016, 93_017, 93_018];
  await kcatWrite(topics.commands, queued);
  await untilGateway(emulator, 'the first of them reached the gateway', (sent) =>
    queued.some(sent),
  );
  const second = spawnFerry(t, env);
  // Once the first replica knows of the rebalance (the one at the gateway then answers
  // within 1.2 s), the rest go at once: all settle within the 2 s it may take to rejoin.
  await waitForLog(
    first,
    'rebalance started: what was handed out still goes out until this member rejoins; nothing new is sent',
    30_000,
  );
  assert.ok(
    queued.some((id) => emulator.stats().sendsById[String(id)] === undefined),
    'some commands were still waiting to be sent when the rebalance began',
  );
  emulator.setKnobs({ latencyMs: 0 });
  await waitForLog(second, 'the partitions of the first assignment are taken over', 60_000);
  await untilResults(topics.results, warm.length + queued.length);
  const after = [93_021, 93_022, 93_023, 93_024];
  await kcatWrite(topics.commands, after);
  await untilResults(topics.results, warm.length + queued.length + after.length);

  assert.ok(
    !first.output().includes('batches not committed'),
    'every batch of the old owner committed whole',
  );
  assertNothingWaitedOrLookedUp(second, emulator, [...warm, ...queued, ...after]);
});
