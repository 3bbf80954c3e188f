/**
 * ferry's transactional producers remember their coordinators instead of looking them
 * up before every request. When the node coordinating a partition's transactions is
 * killed (`kill -9`, on a 3-node cluster of its own), the remembered node must be
 * dropped and the new coordinator found: commits go on, none is lost or doubled, and
 * what was committed is read back with kcat (librdkafka).
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { COORDINATOR_TTL_MS } from '../../src/kafka/coordinator-cache.ts';
import { KafkaClient } from '../../src/kafka/kafka-client.ts';
import { createMetrics } from '../../src/observability/metrics.ts';
import { PartitionTransactions } from '../../src/pipeline/partition-transactions.ts';
import { KafkaCluster } from '../../tools/kafka/cluster.ts';
import { testLogger } from '../helpers/ferry.ts';
import { uniqueTopic } from '../helpers/kafka.ts';
import { kcatReadAll } from '../helpers/kcat.ts';

/** kafkajs's name of FindCoordinator. */
const FIND_COORDINATOR = 'GroupCoordinator';
const WARM_UP = 3;
const BEFORE_KILL = 20;
const AFTER_KILL = 20;
const RECORDS_PER_COMMIT = 5;

test('kill -9 of the transaction coordinator: the remembered coordinator is dropped, commits go on, none lost or doubled', {
  timeout: 240_000,
}, async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'ferry-coordinator-move-'));
  let cluster: KafkaCluster | undefined;
  t.after(async () => {
    await cluster?.stop(5_000);
    await rm(dir, { recursive: true, force: true });
  });
  cluster = await KafkaCluster.start({ dir, heapMb: 384 });
  const brokers = cluster.brokers.split(',');

  const lookups: string[] = [];
  const client = new KafkaClient({
    brokers,
    clientId: 'coordinator-move-check',
    logger: testLogger(),
    onTransactionalRequest: (api) => lookups.push(api),
  });
  t.after(() => client.close());
  const commands = uniqueTopic('coordinator-move');
  const results = `${commands}.results`;
  const group = `${commands}.group`;
  await client.ensureTopics([
    { topic: commands, partitions: 1, replicationFactor: 3 },
    { topic: results, partitions: 3, replicationFactor: 3 },
  ]);
  const prefix = 'coordinator-move';
  const transactions = new PartitionTransactions({
    kafka: client,
    groupId: group,
    topic: commands,
    transactionalIdPrefix: prefix,
    logger: testLogger(),
    metrics: createMetrics(),
  });
  t.after(() => transactions.close());
  await transactions.renew(0);

  const findCount = () => lookups.filter((api) => api === FIND_COORDINATOR).length;
  let offset = 0;
  /** One commit as the pipeline makes it; a failed one is read again and committed anew. */
  const commitNext = async (deadline: number) => {
    const next = offset + RECORDS_PER_COMMIT;
    const records = Array.from({ length: RECORDS_PER_COMMIT }, (_, i) => ({
      topic: results,
      key: `command-${offset + i}`,
      value: JSON.stringify({ offset: offset + i }),
    }));
    for (;;) {
      const outcome = await transactions.commit({
        partition: 0,
        records,
        offset: String(next),
        metadata: null,
        mayRetry: async () => true,
      });
      if (outcome === 'committed') break;
      assert.ok(Date.now() < deadline, `commit up to ${next} still ${outcome}`);
      await sleep(500);
    }
    offset = next;
  };

  // The first commits meet coordinators still being elected for the new internal topics,
  // and kafkajs asks until one answers.
  for (let i = 0; i < WARM_UP; i++) await commitNext(Date.now() + 60_000);
  const findsWarm = findCount();
  const warmAt = Date.now();
  for (let i = 0; i < BEFORE_KILL; i++) await commitNext(Date.now() + 30_000);
  const findsBeforeKill = findCount();
  // Each of the two coordinators (the transaction's and the group's) found once, and
  // again each time the cache's time is up: kafkajs alone looks one up before each of
  // four requests per transaction.
  const periods = 1 + Math.ceil((Date.now() - warmAt) / COORDINATOR_TTL_MS);
  assert.ok(
    findsBeforeKill - findsWarm <= 2 * periods,
    `${findsBeforeKill - findsWarm} lookups for ${BEFORE_KILL} commits in ${Date.now() - warmAt} ms`,
  );

  const transactionalId = `${prefix}-${group}-${commands}-0`;
  const victim = await cluster.transactionCoordinator(transactionalId);
  assert.ok(victim > 0, 'the transactional id has a coordinator');
  await cluster.kill9(victim);
  const killedAt = Date.now();
  for (let i = 0; i < AFTER_KILL; i++) await commitNext(killedAt + 120_000);
  const recoveredMs = Date.now() - killedAt;

  const moved = await cluster.transactionCoordinator(transactionalId);
  assert.ok(moved > 0 && moved !== victim, `coordinator after the kill: ${moved}`);
  assert.ok(findCount() > findsBeforeKill, 'the new coordinator was looked up');
  const committed = await transactions.committed(0);
  assert.equal(committed?.offset, String(offset));

  const read = await kcatReadAll(
    results,
    cluster.nodes.filter((n) => n.id !== victim).map((n) => n.address),
  );
  const keys = read.map((r) => r.key);
  assert.equal(new Set(keys).size, keys.length, 'no result committed twice');
  assert.equal(keys.length, (WARM_UP + BEFORE_KILL + AFTER_KILL) * RECORDS_PER_COMMIT);
  t.diagnostic(
    `node ${victim} killed; ${AFTER_KILL} commits done ${recoveredMs} ms later through node ${moved}; ` +
      `FindCoordinator ${findsBeforeKill} before, ${findCount() - findsBeforeKill} after`,
  );
});
