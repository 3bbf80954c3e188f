/**
 * Fleet control with three real ferry processes, driven through grpcurl (admin API
 * over reflection) and read back with kcat: a pause through one replica stops all
 * three, survives a kill -9 and restart, and a resume through another starts all of
 * them again; GetPipelineState through any replica lists every live one.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  DesiredConsumption,
  GetPipelineStateResponseSchema,
  PauseConsumptionResponseSchema,
  PauseReason,
  ResumeConsumptionResponseSchema,
} from '../../src/admin/gen/ferry/admin/v1/admin_pb.ts';
import { smsOperation } from '../fixtures/operations.ts';
import {
  command,
  produce,
  readRecords,
  startEmulator,
  startFerry,
  testKafka,
  testTopics,
} from '../helpers/ferry.ts';
import { eventually, grpcurlCall, kcatRead, type Replica, startReplica } from '../helpers/fleet.ts';
import { testBrokers } from '../helpers/kafka.ts';

/** The stated bound (docs/admin-api.md, Fleet control): every replica applies a change within it. */
const APPLY_BOUND_MS = 2_000;

const ids = (from: number, count: number) => Array.from({ length: count }, (_, i) => from + i);

test('pause, kill -9 and resume across three replicas, through grpcurl', async (t) => {
  const emulator = await startEmulator(t);
  const topics = testTopics();
  // An in-process ferry creates the topics (the control topic too) and stops.
  const setup = await startFerry(t, emulator, {}, topics);
  await setup.daemon.stop();
  const env: Record<string, string> = { ...setup.env, FERRY_HTTP_PORT: '0' };
  const control = env.FERRY_TOPIC_CONTROL as string;
  const kafka = testKafka(t);
  const lag = async () => {
    const [ends, committed] = await Promise.all([
      kafka.endOffsets(topics.commands),
      kafka.committedOffsets(topics.group, topics.commands),
    ]);
    let total = 0;
    for (const [partition, end] of ends) {
      total += Number(end) - Math.max(0, Number(committed.get(partition)?.offset ?? 0));
    }
    return total;
  };
  const state = (replica: Replica) =>
    grpcurlCall(replica.address, 'GetPipelineState', GetPipelineStateResponseSchema);

  const replicas = await Promise.all([1, 2, 3].map(() => startReplica(t, env)));
  const before = ids(1_000, 30);
  await produce(
    t,
    before.map((id) => command(topics.commands, smsOperation(id))),
  );
  await readRecords(t, topics.results, before.length, { timeoutMs: 60_000 });

  // Pause through the first replica: it answers once it applied the pause itself.
  const [first, second, third] = replicas as [Replica, Replica, Replica];
  const paused = await grpcurlCall(
    first.address,
    'PauseConsumption',
    PauseConsumptionResponseSchema,
    {
      reason: 'fleet test',
    },
  );
  assert.equal(paused.state?.paused, true);
  assert.deepEqual(paused.state?.pauseReasons, [PauseReason.OPERATOR]);
  assert.equal(paused.fleet?.desired?.desired, DesiredConsumption.PAUSED);
  const version = paused.fleet?.desired?.version ?? 0n;
  assert.ok(version >= 1n);

  // Every replica, seen through another one, applied that version within the bound.
  const pausedView = await eventually('three replicas paused', async () => {
    const answer = await state(second);
    const live = answer.fleet?.replicas ?? [];
    const applied = live.filter((r) => r.appliedVersion === version && r.state?.paused);
    return applied.length === 3 ? answer : undefined;
  });
  const desiredAt = Date.parse(pausedView.fleet?.desired?.at ?? '');
  const applyMs = (pausedView.fleet?.replicas ?? []).map(
    (r) => Date.parse(r.appliedAt) - desiredAt,
  );
  t.diagnostic(`apply time per replica after the pause record: ${applyMs.join(', ')} ms`);
  for (const ms of applyMs) assert.ok(ms <= APPLY_BOUND_MS, `applied after ${ms} ms`);
  assert.equal(pausedView.fleet?.totals?.replicas, 3);
  assert.equal(pausedView.fleet?.totals?.pausedReplicas, 3);
  assert.equal(pausedView.fleet?.totals?.partitions, 3, 'the three partitions, one each');

  // Commands produced now get no result, and the group's lag grows.
  const during = ids(2_000, 30);
  const lagBefore = await lag();
  await produce(
    t,
    during.map((id) => command(topics.commands, smsOperation(id))),
  );
  await sleep(3_000);
  assert.equal(
    (await lag()) - lagBefore,
    during.length,
    'nothing of what came after the pause was committed',
  );

  // kill -9 one replica and start it again: it reads the pause before consuming.
  third.ferry.child.kill('SIGKILL');
  await third.ferry.exited();
  const restarted = await startReplica(t, env);
  const log = restarted.ferry.output();
  const applied = log.indexOf('"msg":"fleet control read; desired state applied"');
  assert.ok(
    applied >= 0 && applied < log.indexOf('"msg":"pipeline started"'),
    'desired state first',
  );
  assert.match(log, /"desired":\{"desired":"paused"/);
  const restartedState = await state(restarted);
  assert.equal(restartedState.state?.paused, true);
  assert.deepEqual(restartedState.state?.pauseReasons, [PauseReason.OPERATOR]);
  // Long enough for the group to move the killed member's partition (6 s session).
  await sleep(7_000);
  assert.equal(
    (await lag()) - lagBefore,
    during.length,
    'still nothing consumed after the restart',
  );
  // Not even fetched: no replica holds a command in memory.
  const held = await state(restarted);
  assert.deepEqual(
    (held.fleet?.replicas ?? []).map((r) => r.state?.commandsInFlight ?? 0),
    (held.fleet?.replicas ?? []).map(() => 0),
  );
  assert.equal(
    emulator.stats().sendsById[String(during[0])] ?? 0,
    0,
    'nothing of it reached the gateway',
  );

  // The control record as kcat (librdkafka) reads it: versioned JSON under key `pipeline`.
  const records = await kcatRead(testBrokers().join(','), control);
  const pipeline = records.filter(([key]) => key === 'pipeline').at(-1);
  assert.ok(pipeline, `a pipeline record among ${records.map(([k]) => k).join(', ')}`);
  t.diagnostic(`kcat: ${pipeline.join('\t')}`);
  const value = JSON.parse(pipeline[1]) as Record<string, unknown>;
  assert.deepEqual(Object.keys(value).sort(), ['at', 'by', 'desired', 'reason', 'v', 'version']);
  assert.equal(value.v, 1);
  assert.equal(value.desired, 'paused');
  assert.equal(value.reason, 'fleet test');
  assert.equal(value.version, Number(version));
  assert.match(String(value.at), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  assert.ok(
    records.some(([key]) => key.startsWith('replica/')),
    'replica state records',
  );

  // Resume through another replica: every pending command gets its result.
  const resumed = await grpcurlCall(
    second.address,
    'ResumeConsumption',
    ResumeConsumptionResponseSchema,
  );
  assert.equal(resumed.fleet?.desired?.desired, DesiredConsumption.RUNNING);
  assert.equal(resumed.state?.paused, false);
  const results = await readRecords(t, topics.results, before.length + during.length, {
    timeoutMs: 60_000,
    settleMs: 1_000,
  });
  const keys = results.map((r) => r.key).sort();
  assert.deepEqual(keys, [...before, ...during].map(String).sort(), 'one result per command');
  assert.equal(emulator.stats().duplicates.length, 0);

  // Through any replica: the three live ones (the killed incarnation expired), all running.
  const live = [first, second, restarted];
  const view = await eventually(
    'the three live replicas listed, running',
    async () => {
      const answer = await state(restarted);
      const listed = answer.fleet?.replicas ?? [];
      return listed.length === 3 && listed.every((r) => r.state?.paused === false)
        ? answer
        : undefined;
    },
    30_000,
  );
  const listedIds = (view.fleet?.replicas ?? []).map((r) => r.id);
  for (const replica of live) {
    const other = await state(replica);
    assert.deepEqual(
      (other.fleet?.replicas ?? []).map((r) => r.id),
      listedIds,
      'every replica lists the same fleet',
    );
    assert.equal(other.fleet?.replicas.filter((r) => r.answering).length, 1);
  }
  assert.equal(view.fleet?.totals?.pausedReplicas, 0);
  assert.ok((view.fleet?.replicas ?? []).every((r) => r.version.length > 0));

  // A clean stop deletes the replica's record: it leaves the view at once, not after 10 s.
  first.ferry.child.kill('SIGTERM');
  assert.equal(await first.ferry.exited(), 0);
  const stoppedAt = Date.now();
  await eventually(
    'the stopped replica gone from the view',
    async () => {
      const listed = (await state(second)).fleet?.replicas ?? [];
      return listed.length === 2 ? listed : undefined;
    },
    5_000,
  );
  t.diagnostic(`a stopped replica left the view after ${Date.now() - stoppedAt} ms`);
});
