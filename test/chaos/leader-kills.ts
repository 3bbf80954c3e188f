/**
 * The faults of the cluster run (docs/chaos.md, "The cluster run"): `kill -9` of the
 * node leading most partitions of the commands topic, then of the results topic, then
 * of ferry's group coordinator, in turn; each node stays down until its leaderships
 * moved, is started again, and the next kill waits until every replica is in sync.
 */
import type { KafkaCluster } from '../../tools/kafka/cluster.ts';

/** What one kill did: whom it hit, what that node led, and how long the cluster took to recover. */
export interface LeaderKill {
  readonly atMs: number;
  readonly target: string;
  readonly node: number;
  /** Partitions of the target topic the node led when it was killed. */
  readonly ledPartitions: number;
  /** From the kill until no partition of the target topic had the killed node as leader. */
  readonly leadersMovedMs: number | null;
  /** From the kill until every replica of every topic was in sync again after the restart. */
  readonly inSyncAgainMs: number | null;
}

type Target = 'commands' | 'results' | 'group coordinator';
const TARGETS: readonly Target[] = ['commands', 'results', 'group coordinator'];

/** The node leading most partitions of `leaders`, preferring one not hit last time. */
function busiestLeader(leaders: ReadonlyMap<number, number>, avoid: number | undefined): number {
  const led = new Map<number, number>();
  for (const node of leaders.values()) if (node >= 0) led.set(node, (led.get(node) ?? 0) + 1);
  const ranked = [...led].sort((a, b) => b[1] - a[1]).map(([node]) => node);
  return ranked.find((node) => node !== avoid) ?? ranked[0] ?? -1;
}

/** How long a leader lookup before a kill may keep failing before the run gives up. */
const LOOKUP_PATIENCE_MS = 30_000;

/**
 * `lookup()`, asked again while it fails, for up to `patienceMs`. KafkaCluster's leader
 * lookups are kafkajs admin metadata reads, and those fail by chance while a killed node
 * is still listed in the cluster's metadata (until the controller fences it, about 10 s):
 * kafkajs's cluster.metadata() returns brokerPool.withBroker()'s promise without awaiting
 * it, so when the broker it draws at random is the dead one (one draw in three), the
 * refused connection is not followed by a try of the next broker but by a retry of the
 * whole read, with a new draw. Six such draws in a row (KafkaCluster's client retries 5
 * times) end the lookup with KafkaJSNumberOfRetriesExceeded, `connect ECONNREFUSED` to
 * the killed node: one lookup in 729, and a kill sees some 35 lookups while its node is
 * still listed. That is the harness's own read failing, nothing ferry did: asked again.
 */
async function askAgain<T>(
  lookup: () => Promise<T>,
  wait: (ms: number) => Promise<unknown>,
  patienceMs: number,
): Promise<T> {
  const deadline = Date.now() + patienceMs;
  for (;;) {
    try {
      return await lookup();
    } catch (error: unknown) {
      if (Date.now() >= deadline) throw error;
    }
    await wait(500);
  }
}

export interface LeaderKillOptions {
  readonly cluster: KafkaCluster;
  readonly topics: { readonly commands: string; readonly results: string };
  readonly group: string;
  readonly kills: number;
  /** How long a killed node stays down: longer than the controller's broker session. */
  readonly restartAfterMs: number;
  /** When kill `index` is due (ms since the epoch); a kill never starts before the previous one recovered. */
  readonly dueAt: (index: number) => number;
  /** The run's start, for the times in the report. */
  readonly runStart: number;
  readonly log: (line: string) => void;
  /** A wait the run can abort. */
  readonly wait: (ms: number) => Promise<unknown>;
  readonly stopped: () => boolean;
  /** After each kill's node is back in sync (or gave up). */
  readonly onKill: () => void;
}

/** Carries out the kills in order; resolves with what each did. */
export async function killLeaders(options: LeaderKillOptions): Promise<LeaderKill[]> {
  const { cluster, topics, group, log, wait } = options;
  const allTopics = [topics.commands, topics.results, '__consumer_offsets', '__transaction_state'];
  const kills: LeaderKill[] = [];
  let previous: number | undefined;
  for (let index = 0; index < options.kills; index += 1) {
    const due = options.dueAt(index);
    if (due > Date.now()) await wait(due - Date.now());
    if (options.stopped()) break;
    const target = TARGETS[index % TARGETS.length] as Target;
    const leadersNow = async (): Promise<Map<number, number>> =>
      target === 'group coordinator'
        ? new Map([[0, await cluster.groupCoordinator(group)]])
        : cluster.partitionLeaders(topics[target]);
    // Every node runs (the previous victim is back in sync), but a lookup can still fail.
    const leaders = await askAgain(leadersNow, wait, LOOKUP_PATIENCE_MS);
    const node =
      target === 'group coordinator' ? (leaders.get(0) ?? -1) : busiestLeader(leaders, previous);
    const ledPartitions = [...leaders.values()].filter((n) => n === node).length;
    const atMs = Date.now() - options.runStart;
    log(
      `t=${(atMs / 1000).toFixed(1)}s kill -9 node ${node}, ${target} leader of ${ledPartitions}`,
    );
    const killedAt = Date.now();
    await cluster.kill9(node);
    let leadersMovedMs: number | null = null;
    let lookupError: unknown;
    while (Date.now() - killedAt < options.restartAfterMs) {
      // While the node is down, a lookup that failed (see askAgain) is no answer: the next
      // poll asks again. The node still comes back on time, and if no lookup ever shows the
      // leaders moved, leadersMovedMs stays null, which the run reports as a violation.
      const now = await leadersNow().then(
        (leaders) => [...leaders.values()],
        (error: unknown) => {
          lookupError = error;
          return undefined;
        },
      );
      if (now && leadersMovedMs === null && now.every((n) => n !== node && n >= 0)) {
        leadersMovedMs = Date.now() - killedAt;
        log(`leaders moved off node ${node} after ${leadersMovedMs} ms`);
      }
      await wait(250);
    }
    if (leadersMovedMs === null && lookupError !== undefined)
      log(`leader lookups failed while node ${node} was down: ${String(lookupError)}`);
    await cluster.startNode(node);
    let inSyncAgainMs: number | null = null;
    try {
      await cluster.waitForFullIsr(allTopics, 90_000);
      inSyncAgainMs = Date.now() - killedAt;
      log(`node ${node} restarted; every replica in sync ${inSyncAgainMs} ms after the kill`);
    } catch (error: unknown) {
      log(String(error));
    }
    kills.push({ atMs, target, node, ledPartitions, leadersMovedMs, inSyncAgainMs });
    previous = node;
    options.onKill();
  }
  return kills;
}
