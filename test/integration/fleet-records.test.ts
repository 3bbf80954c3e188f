/**
 * The control topic as a foreign writer (kcat) meets it: a record of a format this
 * version cannot read is skipped, not applied; a replica dead for long and a lapsed
 * claim left by a killed holder are deleted by a live replica (tombstones), so kill -9
 * does not leave records behind forever.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { FleetControl } from '../../src/fleet/fleet-control.ts';
import { ControlTopic } from '../../src/kafka/control-topic.ts';
import { InMemoryPipeline } from '../admin/in-memory-pipeline.ts';
import { testKafka, testLogger } from '../helpers/ferry.ts';
import { eventually, kcatRead, kcatWrite } from '../helpers/fleet.ts';
import { testBrokers, uniqueTopic } from '../helpers/kafka.ts';

test('unreadable records are skipped; long-dead replicas and lapsed claims are collected', async (t) => {
  const topic = uniqueTopic('ferry.control');
  const brokers = testBrokers().join(',');
  await testKafka(t).ensureTopics([
    { topic, partitions: 1, replicationFactor: 1, config: { 'cleanup.policy': 'compact' } },
  ]);
  const longAgo = Date.now() - 120_000;
  const ghost = {
    v: 1,
    id: 'ghost-1',
    version: '0.0.9',
    seenAtMs: longAgo,
    // Readers time a record from when they receive it (fleet-view.ts): read at start, the
    // ghost lives one time to live more, kept short here.
    ttlMs: 1_000,
    appliedVersion: 0,
    appliedAtMs: longAgo,
    state: {},
  };
  await kcatWrite(brokers, topic, 'replica/ghost-1', JSON.stringify(ghost));
  await kcatWrite(
    brokers,
    topic,
    'replay-lock/dead-claim',
    JSON.stringify({ v: 1, claimId: 'dead-claim', owner: 'ghost-1', expiresAtMs: longAgo }),
  );
  // A later format, and a value that is not JSON: neither is applied.
  await kcatWrite(
    brokers,
    topic,
    'pipeline',
    JSON.stringify({ v: 2, desired: 'paused', version: 1, reason: '', by: 'x', at: '' }),
  );
  await kcatWrite(brokers, topic, 'pipeline', 'paused please');

  const pipeline = new InMemoryPipeline();
  const fleet = new FleetControl({
    log: new ControlTopic({
      brokers: testBrokers(),
      clientId: 'records-test',
      topic,
      groupPrefix: `${topic}.records`,
      logger: testLogger(),
    }),
    pipeline,
    logger: testLogger(),
    replicaId: 'live-1',
    version: 'test',
    collectAfterMs: 1_000,
  });
  await fleet.start();
  t.after(() => fleet.stop());

  assert.equal(fleet.view.desired.desired, 'running', 'unreadable records are not applied');
  assert.equal(pipeline.state().paused, false);
  const started = Date.now();
  await eventually('the ghost expires one time to live after it was read', async () =>
    fleet.snapshot().replicas.length === 1 ? true : undefined,
  );
  assert.ok(Date.now() - started < 5_000, 'within its time to live, not its writer’s clock');
  assert.deepEqual(
    fleet.snapshot().replicas.map((r) => r.id),
    ['live-1'],
  );

  // Collected: the ghost's and the dead claim's keys end with a tombstone in the topic.
  await eventually('tombstones written and read back', async () => {
    const now = Date.now();
    return fleet.view.deadReplicas(now, 0).length === 0 &&
      fleet.view.lapsedClaims(now, 0).length === 0
      ? true
      : undefined;
  });
  const records = await kcatRead(brokers, topic);
  const last = (key: string) => records.filter(([k]) => k === key).at(-1)?.[1];
  assert.equal(last('replica/ghost-1'), '', 'a tombstone (kcat prints a null value as empty)');
  assert.equal(last('replay-lock/dead-claim'), '');
  assert.match(last('replica/live-1') ?? '', /^\{"v":1,"id":"live-1","version":"test",/);
});
