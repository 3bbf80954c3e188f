/**
 * One dead-letter replay for the whole fleet: the same replay asked of two ferry
 * processes at the same instant (two grpcurl calls) sends each dead letter to the
 * gateway at most once, a claim held elsewhere (written with kcat) refuses a replay,
 * and the progress is visible through the replica that did not run it.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { fromJsonString } from '@bufbuild/protobuf';
import {
  GetPipelineStateResponseSchema,
  ReplayDeadLettersResponseSchema,
} from '../../src/admin/gen/ferry/admin/v1/admin_pb.ts';
import { smsOperation } from '../fixtures/operations.ts';
import { produce, readRecords, startEmulator, startFerry, testTopics } from '../helpers/ferry.ts';
import { eventually, grpcurl, grpcurlCall, kcatWrite, startReplica } from '../helpers/fleet.ts';
import { testBrokers } from '../helpers/kafka.ts';

test('the same replay through two replicas at once sends each dead letter once', async (t) => {
  const emulator = await startEmulator(t);
  const topics = testTopics();
  const setup = await startFerry(t, emulator, {}, topics);
  await setup.daemon.stop();
  const env: Record<string, string> = { ...setup.env, FERRY_HTTP_PORT: '0' };
  const control = env.FERRY_TOPIC_CONTROL as string;
  const brokers = testBrokers().join(',');

  const ids = Array.from({ length: 60 }, (_, i) => 5_000 + i);
  await produce(
    t,
    ids.map((id, index) => ({
      topic: topics.dlq,
      key: String(id),
      value: JSON.stringify(smsOperation(id)),
      headers: {
        'ferry-error': 'gateway request timed out',
        'ferry-delivery': 'unsent',
        'ferry-source-topic': topics.commands,
        'ferry-source-partition': '0',
        'ferry-source-offset': String(index),
      },
    })),
  );
  const [a, b] = await Promise.all([startReplica(t, env), startReplica(t, env)]);

  // A claim another replica holds (written by kcat, as any client could): refused.
  const held = `replay-lock/held-by-test`;
  await kcatWrite(
    brokers,
    control,
    held,
    JSON.stringify({
      v: 1,
      claimId: 'held-by-test',
      owner: 'pod-x-123456',
      expiresAtMs: Date.now() + 60_000,
    }),
  );
  const refused = await eventually('the held claim refuses a replay', async () => {
    const answer = await grpcurl(a.address, 'ReplayDeadLetters', { limit: 1000 });
    return answer.code !== 0 ? answer : undefined;
  });
  assert.match(refused.stdout + refused.stderr, /FailedPrecondition/);
  assert.match(refused.stdout + refused.stderr, /already running on pod-x-123456/);
  assert.equal(emulator.stats().operations, 0, 'nothing was replayed');
  await kcatWrite(brokers, control, held, null);

  // Two replicas asked at the same instant: one runs; the other is refused, or finds
  // everything replayed already when it comes after the first one ended.
  const answers = await eventually('the released claim lets a replay run', async () => {
    const both = await Promise.all([
      grpcurl(a.address, 'ReplayDeadLetters', { limit: 1000 }),
      grpcurl(b.address, 'ReplayDeadLetters', { limit: 1000 }),
    ]);
    return both.some((answer) => answer.code === 0) ? both : undefined;
  });
  let replayed = 0;
  for (const answer of answers) {
    if (answer.code === 0) {
      replayed += fromJsonString(ReplayDeadLettersResponseSchema, answer.stdout).replayed;
    } else {
      assert.match(answer.stdout + answer.stderr, /FailedPrecondition.*already running on/s);
    }
  }
  t.diagnostic(`answers: ${answers.map((x) => (x.code === 0 ? 'ok' : 'refused')).join(', ')}`);
  assert.equal(replayed, ids.length, 'every dead letter replayed by exactly one of them');

  const results = await readRecords(t, topics.results, ids.length, {
    timeoutMs: 60_000,
    settleMs: 1_500,
  });
  assert.deepEqual(results.map((r) => r.key).sort(), ids.map(String).sort());
  const sends = emulator.stats().sendsById;
  assert.deepEqual(
    ids.filter((id) => sends[String(id)] !== 1),
    [],
    'each dead letter reached the gateway exactly once',
  );

  // The progress of the fleet's replay, through both replicas.
  for (const replica of [a, b]) {
    const state = await grpcurlCall(
      replica.address,
      'GetPipelineState',
      GetPipelineStateResponseSchema,
    );
    const progress = state.fleet?.replay;
    assert.equal(progress?.state, 'finished');
    assert.equal(progress?.replayed, ids.length);
    assert.ok(progress?.owner.length, 'names the replica that ran it');
  }
  // Replayed again through either replica: nothing left to send.
  const again = await grpcurlCall(b.address, 'ReplayDeadLetters', ReplayDeadLettersResponseSchema, {
    limit: 1000,
  });
  assert.equal(again.replayed, 0);
  assert.equal(again.scanned, 0, 'the progress stands past every dead letter');
});
