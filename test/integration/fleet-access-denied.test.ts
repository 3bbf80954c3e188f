/**
 * `Access denied` is one replica's own stop, and the fleet sees it: two ferry daemons
 * share a group and a control topic, each with its own gateway; one gateway refuses the
 * key. The other replica's GetPipelineState lists the stopped one with its cause, and a
 * fleet resume through the healthy one clears the stop on the other.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { AdminService, PauseReason } from '../../src/admin/gen/ferry/admin/v1/admin_pb.ts';
import { GrpcClient } from '../../src/admin/grpc-client.ts';
import { smsOperation } from '../fixtures/operations.ts';
import {
  command,
  produce,
  readRecords,
  startEmulator,
  startFerry,
  TEST_API_KEY,
  testTopics,
} from '../helpers/ferry.ts';
import { eventually } from '../helpers/fleet.ts';

test("a replica's Access-denied stop shows in the fleet, and a fleet resume clears it", async (t) => {
  const refusing = await startEmulator(t);
  refusing.setApiKey('rotated-elsewhere');
  const healthy = await startEmulator(t);
  const topics = testTopics();
  // No retry timer: only an operator's resume lifts the stop.
  const env = { FERRY_ACCESS_DENIED_RETRY_MS: '0' };
  const denied = await startFerry(t, refusing, env, topics);
  const fine = await startFerry(t, healthy, env, topics);
  await eventually('both replicas own partitions', async () =>
    denied.daemon.pipeline.state().partitions.length > 0 &&
    fine.daemon.pipeline.state().partitions.length > 0
      ? true
      : undefined,
  );
  const admin = new GrpcClient(AdminService, { address: `127.0.0.1:${fine.daemon.admin.port}` });
  t.after(() => admin.close());

  const ids = Array.from({ length: 30 }, (_, i) => 8_000 + i);
  await produce(
    t,
    ids.map((id) => command(topics.commands, smsOperation(id))),
  );

  // Through the healthy replica: the other one stopped, with its cause.
  const view = await eventually('the stopped replica in the fleet view', async () => {
    const { fleet } = await admin.unary('getPipelineState', {});
    const stopped = fleet?.replicas.find((r) => r.id === denied.daemon.fleet.replicaId);
    return stopped?.state?.pauseReasons.includes(PauseReason.ACCESS_DENIED) ? fleet : undefined;
  });
  const stopped = view?.replicas.find((r) => r.id === denied.daemon.fleet.replicaId);
  assert.deepEqual(stopped?.state?.pauseReasons, [PauseReason.ACCESS_DENIED]);
  assert.match(stopped?.state?.lastError ?? '', /Access denied/);
  assert.equal(stopped?.state?.paused, true);
  const self = view?.replicas.find((r) => r.answering);
  assert.equal(self?.id, fine.daemon.fleet.replicaId);
  assert.equal(self?.state?.paused, false, 'the stop is that replica’s own');
  assert.equal(view?.totals?.pausedReplicas, 1);
  assert.equal(view?.totals?.replicas, 2);

  // The key is fixed at that gateway; a resume through the healthy replica reaches it.
  refusing.setApiKey(TEST_API_KEY);
  await admin.unary('resumeConsumption', { reason: 'key rotated' });
  const results = await readRecords(t, topics.results, ids.length, {
    timeoutMs: 60_000,
    settleMs: 1_000,
  });
  assert.deepEqual(results.map((r) => r.key).sort(), ids.map(String).sort());
  assert.ok(
    results.every((r) => r.value.success === true),
    'no command failed for the refused key',
  );
  assert.equal(denied.daemon.pipeline.state().paused, false);
});
