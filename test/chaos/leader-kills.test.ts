import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { KafkaCluster } from '../../tools/kafka/cluster.ts';
import { killLeaders } from './leader-kills.ts';

/**
 * A cluster of three nodes whose leader lookups fail as kafkajs's do while a killed
 * node is still listed in the metadata (KafkaJSNumberOfRetriesExceeded, ECONNREFUSED).
 */
function fakeCluster(lookupFails: (call: number, down: boolean) => boolean, moves = true) {
  let down: number | undefined;
  let calls = 0;
  const cluster = {
    async partitionLeaders(): Promise<Map<number, number>> {
      calls += 1;
      if (lookupFails(calls, down !== undefined)) {
        throw Object.assign(new Error('Connection error: connect ECONNREFUSED 127.0.0.1:1'), {
          name: 'KafkaJSNumberOfRetriesExceeded',
        });
      }
      const leader = down === 1 && moves ? 2 : 1;
      return new Map([
        [0, leader],
        [1, leader],
        [2, 3],
      ]);
    },
    async kill9(id: number): Promise<void> {
      down = id;
    },
    async startNode(): Promise<void> {
      down = undefined;
    },
    async waitForFullIsr(): Promise<void> {},
  };
  return cluster as unknown as KafkaCluster;
}

const run = (cluster: KafkaCluster) => {
  const lines: string[] = [];
  const kills = killLeaders({
    cluster,
    topics: { commands: 'c', results: 'r' },
    group: 'g',
    kills: 1,
    restartAfterMs: 200,
    dueAt: () => 0,
    runStart: Date.now(),
    log: (line) => lines.push(line),
    wait: (ms) => new Promise((resolve) => setTimeout(resolve, Math.min(ms, 10))),
    stopped: () => false,
    onKill: () => undefined,
  });
  return { kills, lines };
};

test('a leader lookup that fails while the killed node is listed does not end the run', async () => {
  // Before the kill the first lookup fails; after it, every other one.
  const { kills } = run(fakeCluster((call, down) => (down ? call % 2 === 0 : call === 1)));
  const [kill] = await kills;
  assert.equal(kill?.node, 1);
  assert.equal(kill?.ledPartitions, 2);
  assert.notEqual(kill?.leadersMovedMs, null, 'a later lookup saw the leaders move');
  assert.notEqual(kill?.inSyncAgainMs, null);
});

test('leaders never seen moved are still reported, with why the lookups failed', async () => {
  const stuck = run(fakeCluster(() => false, false));
  assert.equal((await stuck.kills)[0]?.leadersMovedMs, null);

  const blind = run(fakeCluster((_, down) => down));
  assert.equal((await blind.kills)[0]?.leadersMovedMs, null);
  assert.ok(blind.lines.some((l) => l.includes('leader lookups failed while node 1 was down')));
});
