/**
 * The fleet-wide replay lock against the broker: two replicas' FleetReplay, each with
 * its own follower of one control topic, asked at the same instant while the replay
 * itself is held open. Exactly one runs, every time; the other is refused naming it;
 * the progress is visible to the other replica; once released, the other may run.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { DeadLetterListing } from '../../src/admin/dead-letter-list.ts';
import type {
  DeadLetterReplayer,
  ReplayOutcome,
  ReplayRequest,
} from '../../src/admin/dead-letter-replay.ts';
import { FerryError } from '../../src/errors.ts';
import { FleetControl } from '../../src/fleet/fleet-control.ts';
import { FleetReplay } from '../../src/fleet/replay-lock.ts';
import { ControlTopic } from '../../src/kafka/control-topic.ts';
import { InMemoryPipeline } from '../admin/in-memory-pipeline.ts';
import { testKafka, testLogger } from '../helpers/ferry.ts';
import { eventually } from '../helpers/fleet.ts';
import { testBrokers, uniqueTopic } from '../helpers/kafka.ts';

/** A replay that reports one chunk and then runs until released. */
class HeldReplay implements DeadLetterReplayer {
  calls = 0;
  #release: () => void = () => undefined;
  release(): void {
    this.#release();
  }
  async list(): Promise<DeadLetterListing> {
    return { deadLetters: [], scanned: 0, limitReached: false };
  }
  async replay(request: ReplayRequest): Promise<ReplayOutcome> {
    this.calls += 1;
    const outcome = {
      replayed: 7,
      scanned: 9,
      skipped: 2,
      alreadyReplayed: 0,
      limitReached: false,
    };
    request.onChunk?.(outcome);
    await new Promise<void>((resolve) => {
      this.#release = resolve;
    });
    return outcome;
  }
}

test('two replicas claim the replay at the same instant: exactly one runs, every round', async (t) => {
  const topic = uniqueTopic('ferry.control');
  await testKafka(t).ensureTopics([
    { topic, partitions: 1, replicationFactor: 1, config: { 'cleanup.policy': 'compact' } },
  ]);
  const replica = async (id: string) => {
    const fleet = new FleetControl({
      log: new ControlTopic({
        brokers: testBrokers(),
        clientId: `lock-test-${id}`,
        topic,
        groupPrefix: `${topic}.${id}`,
        logger: testLogger(),
      }),
      pipeline: new InMemoryPipeline(),
      logger: testLogger(),
      replicaId: id,
      version: 'test',
    });
    await fleet.start();
    t.after(() => fleet.stop());
    const held = new HeldReplay();
    return {
      id,
      fleet,
      held,
      replay: new FleetReplay({ replayer: held, fleet, logger: testLogger() }),
    };
  };
  const replicas = await Promise.all([replica('replica-a'), replica('replica-b')]);
  // Should an assertion fail mid-round, no replay is left running.
  t.after(() => {
    for (const r of replicas) r.held.release();
  });

  for (let round = 1; round <= 4; round++) {
    const before = replicas.map((r) => r.held.calls);
    // Settled into values at once: the refusal comes while the winner still runs.
    const calls = replicas.map((r) =>
      r.replay.replay({ limit: 10 }).then(
        (outcome) => ({ outcome }),
        (error: unknown) => ({ error }),
      ),
    );
    const winner = await eventually(`round ${round}: one replay runs`, async () =>
      replicas.find((r, i) => r.held.calls > (before[i] ?? 0)),
    );
    const loser = replicas.find((r) => r !== winner);
    assert.ok(loser);
    const loserIndex = replicas.indexOf(loser);
    // A refusal comes within a read-back; a replay that started would run until released.
    const lost = await Promise.race([
      calls[loserIndex],
      sleep(10_000).then(() => ({ stillRunning: true })),
    ]);
    assert.ok(lost && 'error' in lost, `round ${round}: both replays ran`);
    const refusal = lost.error;
    assert.ok(refusal instanceof FerryError);
    assert.equal(refusal.code, 'illegal_state');
    assert.match(refusal.message, new RegExp(`already running on ${winner.id}`));
    assert.equal(loser.held.calls, before[loserIndex], 'the refused replica never started');

    // The loser's replica sees the winner's progress.
    const running = await eventually('progress seen by the other replica', async () => {
      const progress = loser.fleet.view.progress;
      return progress?.owner === winner.id && progress.replayed === 7 ? progress : undefined;
    });
    assert.equal(running.state, 'running');
    winner.held.release();
    const won = await calls[replicas.indexOf(winner)];
    assert.ok(won && 'outcome' in won);
    assert.equal(won.outcome.replayed, 7);
    const finished = await eventually('finished progress seen by the other replica', async () =>
      loser.fleet.view.progress?.state === 'finished' ? loser.fleet.view.progress : undefined,
    );
    assert.equal(finished.scanned, 9);
    // The claim is deleted after the last progress record.
    await eventually('the claim released', async () =>
      loser.fleet.view.lockHolder(Date.now()) === undefined ? true : undefined,
    );
  }
});
