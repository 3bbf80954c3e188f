/**
 * The hooks around kafkajs's group join (kafkajs-join.ts), on a join that stands in for
 * kafkajs's: every `before` first (a failing one ignored), `starting` before each join,
 * and `joined` once the last join in flight for the group returned successfully, so that
 * two joins of one member at once (kafkajs's fetchers may each start one) never record a
 * membership while the second is still under way.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  type ConsumerGroupLike,
  hookedJoin,
  type JoinHooks,
} from '../../src/kafka/kafkajs-join.ts';

interface FakeGroup extends ConsumerGroupLike {
  memberId: string | null;
  generationId: number | null;
}

/** A join each call of which waits until released, then succeeds or fails. */
function controlledJoin() {
  const pending: { release: (ok: boolean) => void }[] = [];
  const join = async function (this: FakeGroup): Promise<void> {
    const ok = await new Promise<boolean>((release) => pending.push({ release }));
    if (!ok) throw new Error('the join failed');
    this.generationId = (this.generationId ?? 0) + 1;
  };
  return { join, pending };
}

function recorder(): { hooks: JoinHooks; events: string[] } {
  const events: string[] = [];
  return {
    events,
    hooks: {
      before: async (group) => {
        events.push(`before g${group.generationId}`);
        throw new Error('a rejoin callback that fails');
      },
      starting: () => {
        events.push('starting');
      },
      joined: (group) => {
        events.push(`joined g${group.generationId}`);
      },
    },
  };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

test('one join: before, starting, the join, joined; a failing before hook is ignored', async () => {
  const { join, pending } = controlledJoin();
  const { hooks, events } = recorder();
  const group: FakeGroup = { memberId: 'm', generationId: 1 };
  const running = hookedJoin(join, () => [hooks]).call(group);
  await tick();
  assert.deepEqual(events, ['before g1', 'starting']);
  pending[0]?.release(true);
  await running;
  assert.deepEqual(events, ['before g1', 'starting', 'joined g2']);
});

test('two joins of one group at once: joined runs once, after the second returned', async () => {
  const { join, pending } = controlledJoin();
  const { hooks, events } = recorder();
  const group: FakeGroup = { memberId: 'm', generationId: 1 };
  const wrapped = hookedJoin(join, () => [hooks]);
  const first = wrapped.call(group);
  const second = wrapped.call(group);
  await tick();
  assert.equal(pending.length, 2);
  pending[0]?.release(true);
  await first;
  assert.ok(!events.some((e) => e.startsWith('joined')), 'not while the second join is under way');
  pending[1]?.release(true);
  await second;
  assert.deepEqual(
    events.filter((e) => e.startsWith('joined')),
    ['joined g3'],
  );

  // Another group's join is its own.
  const other: FakeGroup = { memberId: 'o', generationId: 5 };
  const third = wrapped.call(other);
  await tick();
  pending[2]?.release(true);
  await third;
  assert.deepEqual(
    events.filter((e) => e.startsWith('joined')),
    ['joined g3', 'joined g6'],
  );
});

test('the last join in flight failed: no joined, and the failure is the join’s', async () => {
  const { join, pending } = controlledJoin();
  const { hooks, events } = recorder();
  const group: FakeGroup = { memberId: 'm', generationId: 1 };
  const wrapped = hookedJoin(join, () => [hooks]);
  const first = wrapped.call(group);
  const second = wrapped.call(group);
  await tick();
  pending[0]?.release(true);
  await first;
  pending[1]?.release(false);
  await assert.rejects(second, /the join failed/);
  assert.ok(!events.some((e) => e.startsWith('joined')));

  // The count starts afresh: the next join alone records again.
  const next = wrapped.call(group);
  await tick();
  pending[2]?.release(true);
  await next;
  assert.deepEqual(
    events.filter((e) => e.startsWith('joined')),
    ['joined g3'],
  );
});

test('a join still in its before hooks counts: another join returning meanwhile records nothing', async () => {
  const { join, pending } = controlledJoin();
  const events: string[] = [];
  let releaseBefore: () => void = () => undefined;
  const slowBefore = new Promise<void>((resolve) => {
    releaseBefore = resolve;
  });
  let calls = 0;
  const hooks: JoinHooks = {
    before: async () => {
      calls += 1;
      if (calls === 1) await slowBefore;
    },
    joined: (group) => {
      events.push(`joined g${group.generationId}`);
    },
  };
  const group: FakeGroup = { memberId: 'm', generationId: 1 };
  const wrapped = hookedJoin(join, () => [hooks]);
  const first = wrapped.call(group);
  const second = wrapped.call(group);
  await tick();
  assert.equal(
    pending.length,
    1,
    'the second join is under way, the first still in its before hook',
  );
  pending[0]?.release(true);
  await second;
  assert.deepEqual(events, [], 'not while the first join is still to come');
  releaseBefore();
  await tick();
  pending[1]?.release(true);
  await first;
  assert.deepEqual(events, ['joined g3']);
});
