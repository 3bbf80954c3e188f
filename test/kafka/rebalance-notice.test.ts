/**
 * A member learns that its group rebalances from its next heartbeat; with eager
 * rebalancing every partition of the group stands still until the last member rejoined.
 * ferry's batch consumer, with the default 30 s session, heartbeats every second, so a
 * replica joining or leaving stalls the others for about a second, not the 3 s of a
 * tenth-of-the-session interval. Real broker, ferry's own consumer factory and defaults.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { heartbeatIntervalOf, KafkaClient } from '../../src/kafka/kafka-client.ts';
import { testLogger } from '../helpers/ferry.ts';
import { testBrokers, uniqueTopic } from '../helpers/kafka.ts';

test('the default heartbeat is a tenth of the session, at most 1 s and at least 100 ms', () => {
  const of = (sessionTimeoutMs?: number, heartbeatIntervalMs?: number) =>
    heartbeatIntervalOf({
      groupId: 'g',
      topic: 't',
      onBatch: () => undefined,
      ...(sessionTimeoutMs === undefined ? {} : { sessionTimeoutMs }),
      ...(heartbeatIntervalMs === undefined ? {} : { heartbeatIntervalMs }),
    });
  assert.equal(of(), 1_000);
  assert.equal(of(45_000), 1_000);
  assert.equal(of(6_000), 600);
  assert.equal(of(500), 100);
  assert.equal(of(30_000, 2_500), 2_500, 'an explicit interval is kept');
});

test('with the default session, a member notices another joining within about a second', async (t) => {
  const topic = uniqueTopic('rebalance-notice');
  const logger = testLogger();
  const client = new KafkaClient({ brokers: testBrokers(), clientId: 'rebalance-notice', logger });
  t.after(() => client.close());
  await client.ensureTopics([{ topic, partitions: 2, replicationFactor: 1 }]);
  const groupId = `${topic}.group`;

  const noticed: number[] = [];
  const confirmations = new Set<number>();
  const first = client.createBatchConsumer({
    groupId,
    topic,
    onBatch: () => undefined,
    onRebalancing: () => noticed.push(Date.now()),
  });
  t.after(() => first.stop());
  await first.start();

  // Heartbeats as the coordinator confirms them, for four seconds.
  const watchUntil = Date.now() + 4_000;
  while (Date.now() < watchUntil) {
    if (first.confirmedAt > 0) confirmations.add(first.confirmedAt);
    await sleep(20);
  }
  const times = [...confirmations].sort((a, b) => a - b);
  const gaps = times.slice(1).map((at, index) => at - (times[index] as number));
  assert.ok(gaps.length >= 3, `at least four confirmations in 4 s (gaps ${gaps.join(', ')} ms)`);
  assert.ok(
    gaps.every((gap) => gap <= 1_500),
    `heartbeats about a second apart (gaps ${gaps.join(', ')} ms)`,
  );

  const second = client.createBatchConsumer({ groupId, topic, onBatch: () => undefined });
  t.after(() => second.stop());
  const joiningAt = Date.now();
  const secondStarted = second.start();
  const deadline = Date.now() + 10_000;
  while (noticed.length === 0 && Date.now() < deadline) await sleep(10);
  const noticedAt = noticed[0];
  assert.ok(noticedAt !== undefined, 'the first member noticed the rebalance');
  assert.ok(
    noticedAt - joiningAt <= 1_800,
    `noticed ${noticedAt - joiningAt} ms after the second member asked to join`,
  );
  await secondStarted;
});
