/**
 * Duplicate suppression through a broker restart. The broker (one of this test's own, on
 * the same ports and data folder, so the shared test broker is never touched) is stopped
 * while firsts are at the gateway, their results not yet committed, and started again;
 * copies of those firsts and of firsts committed before the outage are then written
 * with kcat. Each id must reach the gateway once and each copy get one result.
 */
import assert from 'node:assert/strict';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { brokerPorts, type RunningBroker, startBroker } from '../../tools/kafka/broker.ts';
import {
  assertOneSendPerId,
  kcatCommands,
  kcatResults,
  kcatWrite,
  untilResults,
} from '../helpers/dedupe-copies.ts';
import { processEnv, startEmulator, testTopics } from '../helpers/ferry.ts';
import { spawnFerry, waitForLog } from '../helpers/ferry-process.ts';
import { removeWhenDone } from '../helpers/scratch-dir.ts';

/** How long the gateway holds its answers to the firsts the outage catches. */
const HELD_ANSWER_MS = 5_000;
/** How long the broker stays away: longer than the held answers and a request timeout. */
const OUTAGE_MS = 10_000;

test('copies written after a broker restart are answered, not sent again, also of firsts the outage caught at the gateway', {
  timeout: 180_000,
}, async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'ferry-dedupe-restart-'));
  const options = { dir, ...(await brokerPorts()), heapMb: 384 };
  let broker: RunningBroker | undefined = await startBroker(options);
  t.after(() => broker?.stop(10_000));
  removeWhenDone(t, dir);
  const brokers = [broker.brokers];
  const emulator = await startEmulator(t);
  const topics = testTopics();
  const ferry = spawnFerry(t, {
    ...processEnv(topics, emulator, { brokers: broker.brokers, clientId: `${topics.group}-c` }),
    FERRY_TOPIC_PARTITIONS: '2',
    FERRY_BATCH_LINGER_MS: '5',
    FERRY_KAFKA_SESSION_TIMEOUT_MS: '10000',
    FERRY_REQUEST_TIMEOUT_MS: '8000',
  });
  await waitForLog(ferry, 'ferry is running', 60_000);
  let written = 0;

  // Firsts answered and committed before the outage.
  const before = [101, 102, 103, 104, 105, 106];
  await kcatWrite(topics.commands, before, brokers);
  written += before.length;
  await untilResults(topics.results, written, 30_000, brokers);

  // Firsts at the gateway when the broker goes: their answers come while it is away, so
  // their results and dedupe records cannot be committed until it is back.
  const caught = [201, 202, 203, 204];
  emulator.setKnobs({ latencyMs: HELD_ANSWER_MS });
  await kcatWrite(topics.commands, caught, brokers);
  written += caught.length;
  const deadline = Date.now() + 30_000;
  while (!caught.every((id) => emulator.stats().sendsById[String(id)] === 1)) {
    assert.ok(Date.now() < deadline, 'the caught firsts reached the gateway');
    await sleep(10);
  }
  const atGateway = Date.now();
  await broker.stop(10_000);
  assert.ok(
    Date.now() - atGateway < HELD_ANSWER_MS,
    'the broker was gone before the gateway answered the caught firsts',
  );
  broker = undefined;
  await sleep(OUTAGE_MS);
  emulator.setKnobs({ latencyMs: 0 });
  broker = await startBroker(options);

  // Copies of both kinds, and firsts with copies right behind them.
  const after = [301, 302, 303];
  const copies = [...before, ...caught, ...after, ...after];
  await kcatWrite(topics.commands, copies, brokers);
  written += copies.length;
  await untilResults(topics.results, written, 90_000, brokers);
  // Long enough for a result written twice to show.
  await sleep(1_500);

  const commands = await kcatCommands(topics.commands, brokers);
  assert.equal(commands.length, written);
  assertOneSendPerId({
    emulator,
    commands,
    results: await kcatResults(topics.results, brokers),
    ids: [...before, ...caught, ...after],
    // A first whose commit the outage held may be answered to its copy from the records
    // written when it finally commits, or from the first still on its way.
    answeredInFlight: new Set([...caught, ...after]),
    // A caught first settles once the broker is back: its copies may name a completion the
    // outage, the broker's start and the group's return apart from the first's own.
    heldByOutage: { ids: new Set(caught), apartMs: OUTAGE_MS + 30_000 },
  });
  assert.equal(ferry.child.exitCode, null, 'ferry rode the restart out');
});
