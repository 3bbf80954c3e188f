/**
 * ferry on a replicated cluster (its own three KRaft nodes, not the test run's
 * broker): it creates its topics replicated three times, and `kill -9` of the node
 * leading most of the commands partitions while commands flow costs no command and
 * commits no second result. The leaders and replicas are read with kcat
 * (librdkafka), a client ferry did not write.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { KafkaCluster } from '../../tools/kafka/cluster.ts';
import { findTool } from '../deploy/external-tools.ts';
import { smsOperation } from '../fixtures/operations.ts';
import { loopbackEnv, startEmulator, TEST_API_KEY, testTopics } from '../helpers/ferry.ts';
import { spawnFerry, waitForLog } from '../helpers/ferry-process.ts';
import { PlannedProducer, readTopic } from './chaos-kafka.ts';
import type { PlannedRecord } from './command-mix.ts';

const execFileAsync = promisify(execFile);

interface KcatPartition {
  readonly partition: number;
  readonly leader: number;
  readonly replicas: readonly { id: number }[];
  readonly isrs: readonly { id: number }[];
}

/** A topic's partitions as kcat's metadata listing (`-L -J`) shows them. */
async function kcatPartitions(brokers: string, topic: string): Promise<KcatPartition[]> {
  const { stdout } = await execFileAsync(
    findTool('kcat'),
    ['-L', '-J', '-b', brokers, '-t', topic, '-m', '10'],
    { timeout: 30_000 },
  );
  const listing = JSON.parse(stdout) as {
    topics: { topic: string; partitions: KcatPartition[] }[];
  };
  return listing.topics.find((t) => t.topic === topic)?.partitions ?? [];
}

const COMMANDS = 300;
const FIRST_ID = 7_000_000;

test('kill -9 of a commands leader on a 3-node cluster: every command gets exactly one result', {
  timeout: 170_000,
}, async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'ferry-cluster-test-'));
  let cluster: KafkaCluster | undefined;
  // One hook, so the nodes are down before their folder goes, whatever failed.
  t.after(async () => {
    await cluster?.stop(5_000);
    await rm(dir, { recursive: true, force: true });
  });
  const startedAt = Date.now();
  const elapsed = () => `${((Date.now() - startedAt) / 1000).toFixed(1)} s`;
  cluster = await KafkaCluster.start({ dir, heapMb: 384 });
  const { brokers } = cluster;
  t.diagnostic(`cluster up at ${elapsed()}`);

  const emulator = await startEmulator(t, { knobs: { latencyMs: 20 } });
  const topics = testTopics();
  const ferry = spawnFerry(t, {
    ...loopbackEnv({
      brokers,
      group: topics.group,
      clientId: topics.group,
      topics,
      gatewayUrl: emulator.url,
      apiKey: TEST_API_KEY,
    }),
    FERRY_TOPIC_PARTITIONS: '6',
    FERRY_TOPIC_REPLICATION_FACTOR: '3',
    FERRY_LOG_LEVEL: process.env.FAILOVER_LOG_LEVEL ?? 'info',
    FERRY_BATCH_MAX_OPS: '20',
    FERRY_CONCURRENCY: '2',
    FERRY_REQUEST_TIMEOUT_MS: '2000',
    FERRY_KAFKA_SESSION_TIMEOUT_MS: '10000',
    FERRY_SHUTDOWN_GRACE_MS: '5000',
  });
  await waitForLog(ferry, 'ferry is running', 90_000);
  t.diagnostic(`ferry running at ${elapsed()}`);

  // The coordinator the chaos run aims at (computed from the group id) is the node
  // whose own log says it stabilised ferry's group.
  const stabilisedBy: number[] = [];
  for (const node of cluster.nodes) {
    const log = await readFile(join(node.dir, 'logs', 'server.log'), 'utf8').catch(() => '');
    if (log.includes(`[GroupCoordinator ${node.id}]: Stabilized group ${topics.group} `))
      stabilisedBy.push(node.id);
  }
  assert.deepEqual(stabilisedBy, [await cluster.groupCoordinator(topics.group)]);

  // ferry created its topics on all three nodes, every replica in sync.
  for (const topic of [topics.commands, topics.results]) {
    const partitions = await kcatPartitions(brokers, topic);
    assert.equal(partitions.length, 6, topic);
    for (const p of partitions) {
      assert.equal(p.replicas.length, 3, `${topic}[${p.partition}] replicas`);
      assert.equal(p.isrs.length, 3, `${topic}[${p.partition}] in sync`);
    }
  }

  const records: PlannedRecord[] = Array.from({ length: COMMANDS }, (_, i) => ({
    key: String(FIRST_ID + i),
    value: Buffer.from(JSON.stringify(smsOperation(FIRST_ID + i))),
    label: 'sms',
    reconcilableId: String(FIRST_ID + i),
    expectDeadLetter: false,
  }));
  const producer = new PlannedProducer(brokers);
  t.after(() => producer.close());
  // A third before the kill, the rest while the leader is gone and after.
  const chunk = 25;
  const killAt = Math.floor(COMMANDS / 3);
  let victim = -1;
  let killedAt = 0;
  for (let i = 0; i < COMMANDS; i += chunk) {
    if (i === killAt) {
      const before = await kcatPartitions(brokers, topics.commands);
      const led = new Map<number, number>();
      for (const p of before) led.set(p.leader, (led.get(p.leader) ?? 0) + 1);
      victim = [...led].sort((a, b) => b[1] - a[1])[0]?.[0] ?? -1;
      assert.ok(victim > 0, 'kcat names a leader');
      killedAt = Date.now();
      await cluster.kill9(victim);
      t.diagnostic(`node ${victim} killed at ${elapsed()}`);
    }
    await producer.send(topics.commands, records.slice(i, i + chunk));
    await sleep(100);
  }
  t.diagnostic(`all commands produced at ${elapsed()}`);

  const results = await readTopic(
    brokers,
    topics.results,
    (read) => new Set(read.map((r) => r.key)).size >= COMMANDS,
    { timeoutMs: 90_000, settleMs: 2_000 },
  );
  const tookMs = Date.now() - killedAt;
  const byKey = new Map<string, number>();
  for (const r of results) byKey.set(r.key, (byKey.get(r.key) ?? 0) + 1);
  const missing = records.filter((r) => !byKey.has(r.key)).map((r) => r.key);
  const duplicated = [...byKey].filter(([, n]) => n > 1).map(([key]) => key);
  assert.deepEqual({ missing, duplicated }, { missing: [], duplicated: [] });
  assert.equal(results.length, COMMANDS);
  const failed = results.filter(
    (r) => JSON.parse(r.value?.toString('utf8') ?? '{}').success !== true,
  );
  assert.equal(failed.length, 0, 'every SMS was sent');
  assert.deepEqual(emulator.stats().duplicates, [], 'no command reached the gateway twice');

  // The kill really moved leadership: kcat sees no partition led by the killed node.
  const after = await kcatPartitions(brokers, topics.commands);
  assert.ok(
    after.every((p) => p.leader !== victim && p.leader > 0),
    `leaders after the kill of node ${victim}: ${after.map((p) => p.leader).join(',')}`,
  );
  t.diagnostic(`all ${COMMANDS} results ${tookMs} ms after the kill, at ${elapsed()}`);
  ferry.child.kill('SIGTERM');
  assert.equal(await ferry.exited(), 0, ferry.output().slice(-3000));
});
