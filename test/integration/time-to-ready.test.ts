/**
 * Time to ready: from spawning ferry to its "ferry is running" line, against a broker of
 * its own with a `group.initial.rebalance.delay.ms` like production's (the test broker
 * sets 0), where every consumer group ferry joins at start waits that long for its first
 * member. The first start creates the topics; the later ones are restarts. The figures
 * are printed (`# time to ready: …`); docs/kafka-security.md quotes them at Kafka's
 * default of 3 s (TIME_TO_READY_DELAY_MS=3000). The test runs with 8 s, which sets the
 * joins apart from the rest of a start on a loaded machine.
 */
import assert from 'node:assert/strict';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { brokerPorts, type RunningBroker, startBroker } from '../../tools/kafka/broker.ts';
import { processEnv, startEmulator, testTopics } from '../helpers/ferry.ts';
import { spawnFerry, waitForLog } from '../helpers/ferry-process.ts';
import { removeWhenDone } from '../helpers/scratch-dir.ts';

const INITIAL_REBALANCE_DELAY_MS = Number(process.env.TIME_TO_READY_DELAY_MS ?? 8_000);
/**
 * A restart waits for one group join, ferry's own consumer group; everything else took
 * about 3 s on a quiet machine and over 6 s while other suites ran. A second join (the
 * access check's read probe and the control-topic follower each used to wait for one)
 * costs a whole delay more, so the bound sits a second short of two delays (at least
 * 4.5 s past one, for short delays): a loaded machine does not fail it, a second join does.
 */
const READY_BOUND_MS = Math.max(
  2 * INITIAL_REBALANCE_DELAY_MS - 1_000,
  INITIAL_REBALANCE_DELAY_MS + 4_500,
);

test('time to ready with a production-like initial rebalance delay: one group join, no second', {
  timeout: 180_000,
}, async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'ferry-ready-'));
  let broker: RunningBroker | undefined = await startBroker({
    dir,
    ...(await brokerPorts()),
    heapMb: 384,
    extraProperties: { 'group.initial.rebalance.delay.ms': String(INITIAL_REBALANCE_DELAY_MS) },
  });
  t.after(() => broker?.stop(10_000));
  removeWhenDone(t, dir);
  const emulator = await startEmulator(t);
  const topics = testTopics();
  const env = {
    ...processEnv(topics, emulator, {
      brokers: broker.brokers,
      clientId: `${topics.group}-client`,
    }),
    FERRY_TOPIC_PARTITIONS: '2',
    FERRY_SHUTDOWN_GRACE_MS: '3000',
  };
  const figures: number[] = [];
  for (let start = 0; start < 3; start++) {
    const spawnedAt = Date.now();
    const ferry = spawnFerry(t, env);
    await waitForLog(ferry, 'ferry is running', 60_000);
    const readyMs = Date.now() - spawnedAt;
    figures.push(readyMs);
    ferry.child.kill('SIGTERM');
    assert.equal(await ferry.exited(), 0, ferry.output());
  }
  process.stdout.write(
    `# time to ready (initial rebalance delay ${INITIAL_REBALANCE_DELAY_MS} ms): first start ${figures[0]} ms, restarts ${figures.slice(1).join(', ')} ms\n`,
  );
  for (const readyMs of figures.slice(1)) {
    assert.ok(readyMs <= READY_BOUND_MS, `a restart took ${readyMs} ms`);
  }
  await broker.stop(10_000);
  broker = undefined;
});
