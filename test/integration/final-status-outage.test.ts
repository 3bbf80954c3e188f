/**
 * Final statuses through an outage: Kafka is gone for 30 s while the gateway calls back,
 * so the replica receiving the callbacks cannot acknowledge them (it answers 503 once it gave
 * up writing them), and it is killed with kill -9 holding them. Two other replicas take its partitions over
 * (one after the other: a rebalance while they finalize) and find those messages' final
 * statuses by lookup. The broker is this test's own (same ports and data folder across
 * the restart), so the shared test broker is never touched. The gateway holds the first
 * callbacks until the broker is down, so the test does not race the broker's stop. Read with kcat: exactly one
 * final event per message, within the poll bound.
 */
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Emulator } from '../../src/emulator/emulator.ts';
import {
  brokerPorts,
  freePort,
  type RunningBroker,
  startBroker,
} from '../../tools/kafka/broker.ts';
import { kcatWrite, untilResults } from '../helpers/dedupe-copies.ts';
import { processEnv, startEmulator, testTopics } from '../helpers/ferry.ts';
import { crashLines, spawnFerry, waitForLog } from '../helpers/ferry-process.ts';
import { finalEventsById as finalsById } from '../helpers/final-events.ts';
import { eventually } from '../helpers/fleet.ts';
import { removeWhenDone } from '../helpers/scratch-dir.ts';

const OUTAGE_MS = 30_000;
const POLL_AFTER_MS = 5_000;

test('callbacks not acknowledged during an outage, their receiver killed: every message still gets one final status', {
  timeout: 240_000,
}, async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'ferry-final-outage-'));
  const options = { dir, ...(await brokerPorts()), heapMb: 384 };
  let broker: RunningBroker | undefined = await startBroker(options);
  t.after(() => broker?.stop(10_000));
  removeWhenDone(t, dir);
  const brokers = [broker.brokers];
  // The first commands' callbacks are held at the gateway until Kafka is gone, so they
  // arrive in the outage however long the sends and the broker's stop take.
  const emulator = await startEmulator(t, {
    knobs: { callbackDelayMs: 500, callbackDuplicateRate: 0.2 },
  });
  emulator.holdCallbacks(true);
  const topics = testTopics();
  const replica = async (name: string) => {
    const port = await freePort();
    const ferry = spawnFerry(t, {
      ...processEnv(topics, emulator, { brokers: broker?.brokers ?? '', clientId: topics.group }),
      FERRY_TOPIC_PARTITIONS: '4',
      FERRY_BATCH_LINGER_MS: '5',
      FERRY_KAFKA_SESSION_TIMEOUT_MS: '10000',
      FERRY_REQUEST_TIMEOUT_MS: '5000',
      FERRY_HTTP_PORT: String(port),
      FERRY_CALLBACK_PUBLIC_URL: `http://127.0.0.1:${port}`,
      FERRY_CALLBACK_TOKEN: 'outage-token',
      FERRY_STATUS_TRACKING: 'true',
      FERRY_STATUS_POLL_AFTER_MS: String(POLL_AFTER_MS),
      FERRY_STATUS_FOLLOW_MS: '250',
      FERRY_LOG_LEVEL: 'info',
    });
    await waitForLog(ferry, 'ferry is running', 60_000);
    return { name, port, ferry };
  };

  const a = await replica('a');
  const first = Array.from({ length: 24 }, (_, index) => 5_000 + index);
  await kcatWrite(topics.commands, first, brokers);
  await untilResults(topics.results, first.length, 30_000, brokers);

  // Kafka goes before the first callbacks come: replica a cannot write them and answers 503.
  await broker.stop(10_000);
  broker = undefined;
  const outageStarted = Date.now();
  emulator.holdCallbacks(false);
  // Replica a must have had the callbacks and not acknowledged them. Its own 503 comes when
  // the publish timeout (10 s) ends; the emulator stops waiting for an answer after 5 s
  // and counts the attempt timed out, which says the same: a took the callback and it is
  // not in Kafka. Either is enough; a that exited by itself, refused connections or
  // callbacks never attempted are not.
  const seen = await eventually(
    'replica a had the callbacks and did not acknowledge them',
    async () => {
      if (a.ferry.output().includes('could not be published')) return '503';
      if (a.ferry.child.exitCode !== null || a.ferry.child.signalCode !== null) return undefined;
      const stats = emulator.stats();
      return stats.callbacksTimedOutAttempts > 0 && stats.callbacksSent === 0
        ? 'unanswered'
        : undefined;
    },
    90_000,
  ).catch((error: unknown) => {
    // In the message itself, so that CI's summary of a failure shows it.
    throw new Error(`${String(error)}; ${outageDiagnostics(a.ferry, emulator)}`);
  });
  t.diagnostic(`replica a: ${seen}; ${outageDiagnostics(a.ferry, emulator)}`);
  // kill -9 while it holds them: whatever it kept in memory is gone.
  a.ferry.child.kill('SIGKILL');
  await a.ferry.exited();
  await sleep(Math.max(0, OUTAGE_MS - (Date.now() - outageStarted)));
  broker = await startBroker(options);

  // Two replicas take over, the second joining while the first finalizes: a rebalance.
  await replica('b');
  const second = Array.from({ length: 12 }, (_, index) => 6_000 + index);
  await kcatWrite(topics.commands, second, brokers);
  await replica('c');
  const ids = [...first, ...second];
  await untilResults(topics.results, ids.length, 60_000, brokers);

  const finalTopic = `${topics.status}.final`;
  await eventually(
    'a final status event for every message',
    async () =>
      (await finalsById(brokers[0] as string, finalTopic)).size >= ids.length ? true : undefined,
    90_000,
  );
  await sleep(3_000);
  const finals = await finalsById(brokers[0] as string, finalTopic);
  assert.deepEqual([...finals.keys()].sort(), ids.map(String).sort());
  for (const [id, events] of finals) {
    assert.equal(events.length, 1, `id ${id}: ${JSON.stringify(events)}`);
    assert.notEqual(events[0]?.source, 'give_up', `id ${id}`);
  }
  // The first commands' callbacks never reached a replica that could write them: their
  // final statuses came from lookups.
  for (const id of first) assert.equal(finals.get(String(id))?.[0]?.source, 'poll', `id ${id}`);
});

/** What replica a and the emulator's callbacks did: a's state, counts and the kinds of a's log lines. */
function outageDiagnostics(
  ferry: { child: ChildProcess; output(): string },
  emulator: Emulator,
): string {
  const exit = ferry.child.exitCode ?? ferry.child.signalCode;
  const {
    acceptedMessages,
    callbacksSent,
    callbacksFailed,
    callbacksPending,
    callbacksFailedAttempts,
    callbacksTimedOutAttempts,
  } = emulator.stats();
  const messages = new Map<string, number>();
  for (const line of ferry.output().split('\n')) {
    const msg = /"msg":"([^"]{0,80})/.exec(line)?.[1];
    if (msg !== undefined) messages.set(msg, (messages.get(msg) ?? 0) + 1);
  }
  const lastKinds = [...messages].slice(-12).map(([msg, count]) => `${count}× ${msg}`);
  return [
    `replica a ${exit === null ? 'running' : `exited (${exit})`}`,
    // kafkajs's "Crash: <error>" and ferry's fatal line say why a replica exited.
    `crash lines: ${crashLines(ferry.output()).join(' | ') || 'none'}`,
    `emulator ${JSON.stringify({ acceptedMessages, callbacksSent, callbacksFailed, callbacksPending, callbacksFailedAttempts, callbacksTimedOutAttempts })}`,
    `a's last kinds of log line: ${lastKinds.join(' | ')}`,
  ].join('; ');
}
