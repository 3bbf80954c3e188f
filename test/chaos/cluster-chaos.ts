/**
 * The chaos run on a replicated cluster (docs/chaos.md, "The cluster run"): three
 * KRaft nodes, topics replicated three times with two in sync required, two ferry
 * replicas, a bounded stream of commands, and mid-stream `kill -9` of the node that
 * leads the commands topic's partitions, then of the node leading the results
 * topic's, then of the group's coordinator; each is started again and caught up
 * before the next. The same checks as the single-broker run (verify-run.ts), final
 * status events included, and no replica may exit: losing one node of three is not an outage.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { createEmulator, type Emulator } from '../../src/emulator/index.ts';
import { KafkaCluster } from '../../tools/kafka/cluster.ts';
import { FIXTURE_RCS_SENDER, FIXTURE_SENDER } from '../fixtures/operations.ts';
import { loopbackEnv } from '../helpers/ferry.ts';
import {
  awaitFinalStatuses,
  createTopics,
  groupLag,
  PlannedProducer,
  readTopic,
  recordKeys,
} from './chaos-kafka.ts';
import { buildCommandMix } from './command-mix.ts';
import { killOnExit, ReplicaSet } from './ferry-replicas.ts';
import { keepRunFiles } from './kept-logs.ts';
import { killLeaders, type LeaderKill } from './leader-kills.ts';
import { FINAL_STATUS_WAIT_MS } from './run-chaos.ts';
import { createSeededRandom } from './seeded-random.ts';
import { type ChaosFigures, verifyRun } from './verify-run.ts';

const API_KEY = 'chaos-api-key-0123456789';
const REPLICATION_FACTOR = 3;

export interface ClusterChaosOptions {
  readonly commands: number;
  readonly partitions: number;
  readonly replicas: number;
  /** Leader kills, in the order: commands leader, results leader, group coordinator, again. */
  readonly kills: number;
  /** Commands are produced evenly over this window; the kills fall inside it. */
  readonly produceWindowMs: number;
  /** How long a killed node stays down. */
  readonly restartAfterMs: number;
  readonly drainTimeoutMs: number;
  readonly nodeHeapMb: number;
  readonly seed: number;
  /** Where logs and data are copied when the run fails (none: not kept). */
  readonly keepLogsDir?: string;
  readonly log: (line: string) => void;
  readonly signal?: AbortSignal;
}

export interface ClusterChaosReport {
  readonly ok: boolean;
  readonly violations: readonly string[];
  readonly figures: ChaosFigures & {
    readonly nodes: number;
    readonly replicationFactors: readonly number[];
    readonly kills: readonly LeaderKill[];
    /** Sends of partitions kafkajs's answer left out, by the run's producer and by ferry. */
    readonly producerResends: number;
    readonly ferryResends: number;
  };
  readonly logsKeptIn?: string;
}

/** Lines of the replicas' logs that contain `text`. */
async function countLines(dir: string, names: readonly string[], text: string): Promise<number> {
  let count = 0;
  for (const name of names) {
    const log = await readFile(join(dir, `${name}.log`), 'utf8').catch(() => '');
    for (const line of log.split('\n')) if (line.includes(text)) count += 1;
  }
  return count;
}

export async function runClusterChaos(options: ClusterChaosOptions): Promise<ClusterChaosReport> {
  const { log } = options;
  const random = createSeededRandom(options.seed);
  const signal = options.signal ?? new AbortController().signal;
  const wait = (ms: number) => sleep(Math.max(0, ms), undefined, { signal });
  const dir = await mkdtemp(join(tmpdir(), 'ferry-cluster-chaos-'));
  let cluster: KafkaCluster | undefined;
  let emulator: Emulator | undefined;
  let replicas: ReplicaSet | undefined;
  let producer: PlannedProducer | undefined;
  let stopped = false;
  let failed = true;
  const removeExitHook = killOnExit(() => [
    ...(cluster?.pids() ?? []),
    ...(replicas?.pids() ?? []),
  ]);
  try {
    const startedAt = Date.now();
    cluster = await KafkaCluster.start({ dir: join(dir, 'kafka'), heapMb: options.nodeHeapMb });
    const { brokers } = cluster;
    log(`3-node cluster ${brokers} up in ${Date.now() - startedAt} ms (${dir})`);

    emulator = createEmulator({
      apiKey: API_KEY,
      senders: [FIXTURE_SENDER, FIXTURE_RCS_SENDER],
      seed: options.seed,
      knobs: { latencyMs: 2, callbackDelayMs: 20, viberReplyRate: 0 },
    });
    await emulator.start();
    const topics = {
      commands: 'cluster.commands',
      results: 'cluster.results',
      status: 'cluster.status',
      dlq: 'cluster.dlq',
    };
    const group = 'cluster-chaos';
    await createTopics(brokers, Object.values(topics), options.partitions, {}, REPLICATION_FACTOR);
    const replicationFactors = [
      ...new Set(
        (
          await Promise.all(Object.values(topics).map((t) => cluster?.replicaCounts(t) ?? []))
        ).flat(),
      ),
    ];

    const plan = buildCommandMix(options.commands, random);
    const env: Record<string, string> = {
      ...loopbackEnv({
        brokers,
        group,
        clientId: 'cluster',
        topics,
        gatewayUrl: emulator.url,
        apiKey: API_KEY,
      }),
      FERRY_TOPIC_PARTITIONS: String(options.partitions),
      FERRY_TOPIC_REPLICATION_FACTOR: String(REPLICATION_FACTOR),
      FERRY_BATCH_MAX_OPS: '50',
      FERRY_BATCH_LINGER_MS: '20',
      FERRY_CONCURRENCY: '8',
      FERRY_REQUEST_TIMEOUT_MS: '2000',
      FERRY_SHUTDOWN_GRACE_MS: '5000',
      FERRY_KAFKA_SESSION_TIMEOUT_MS: '10000',
      FERRY_LOG_LEVEL: 'info',
      // Final status tracking, looked up 2 s after a send (no callbacks here), as in the fault run.
      FERRY_STATUS_TRACKING: 'true',
      FERRY_STATUS_POLL_AFTER_MS: '2000',
    };
    const finalTopic = env.FERRY_TOPIC_STATUS_FINAL as string;
    replicas = new ReplicaSet({ logDir: dir, env });
    for (let i = 1; i <= options.replicas; i += 1) replicas.add(`replica-${i}`);

    producer = new PlannedProducer(brokers);
    const activeProducer = producer;
    const chunks = Math.max(1, Math.round(options.produceWindowMs / 250));
    const chunkSize = Math.ceil(plan.length / chunks);
    const runStart = Date.now();
    let produced = 0;
    const production = (async () => {
      for (let i = 0; i < plan.length && !stopped; i += chunkSize) {
        const due = runStart + (i / chunkSize) * 250;
        if (due > Date.now()) await wait(due - Date.now());
        const chunk = plan.slice(i, i + chunkSize);
        await activeProducer.send(topics.commands, chunk);
        produced += chunk.length;
      }
    })();

    let lastFaultAt = runStart;
    const injection = killLeaders({
      cluster,
      topics,
      group,
      kills: options.kills,
      restartAfterMs: options.restartAfterMs,
      // Evenly spread over the window, each only once the previous victim is back in sync.
      dueAt: (index) =>
        runStart + options.produceWindowMs * ((index + 0.5) / (options.kills + 0.5)),
      runStart,
      log,
      wait,
      stopped: () => stopped,
      onKill: () => {
        lastFaultAt = Date.now();
      },
    });
    injection.catch(() => undefined);
    await production;
    const productionEndAt = Date.now();
    const kills = await injection;
    log(`produced ${produced} records in ${productionEndAt - runStart} ms; waiting for the lag`);

    let drainedAt: number | undefined;
    let lastLag: number | string | undefined;
    while (Date.now() < lastFaultAt + options.drainTimeoutMs) {
      signal.throwIfAborted();
      lastLag = await groupLag(brokers, group, topics.commands);
      if (lastLag === 0) {
        drainedAt = Date.now();
        break;
      }
      await wait(250);
    }
    log(drainedAt === undefined ? `the lag did not drain: ${lastLag}` : 'lag drained');
    const tracked = await awaitFinalStatuses(
      brokers,
      { results: topics.results, final: finalTopic },
      plan.length,
      drainedAt === undefined ? 10_000 : FINAL_STATUS_WAIT_MS,
      log,
    );
    await replicas.stopAll(10_000);

    const results = await readTopic(
      brokers,
      topics.results,
      (records) => new Set(records.map((r) => r.key)).size >= plan.length,
      { timeoutMs: drainedAt === undefined ? 10_000 : 60_000, settleMs: 3_000 },
    ).catch(() =>
      readTopic(brokers, topics.results, () => true, { timeoutMs: 5_000, settleMs: 5_000 }),
    );
    const deadLetters = await readTopic(brokers, topics.dlq, () => true, {
      timeoutMs: 10_000,
      settleMs: 2_000,
    });
    const finalStatuses = await readTopic(
      brokers,
      finalTopic,
      (records) => records.length >= tracked.events,
      { timeoutMs: 30_000, settleMs: 3_000 },
    ).catch(() =>
      readTopic(brokers, finalTopic, () => true, { timeoutMs: 5_000, settleMs: 5_000 }),
    );
    const stats = emulator.stats();
    const report = verifyRun({
      plan,
      commandKeys: await recordKeys(brokers, topics.commands, plan.length),
      results,
      deadLetters,
      sendsById: stats.sendsById,
      emulatorFaults: stats.faults,
      emulatorRequests: stats.requests,
      drainMs: drainedAt === undefined ? undefined : drainedAt - lastFaultAt,
      drainMsAfterLastRecord: drainedAt === undefined ? undefined : drainedAt - productionEndAt,
      unexpectedExits: replicas.unexpectedExits,
      // One node of three down is no outage: a replica exiting meanwhile is a violation.
      brokerDownWindows: [],
      replicaStarts: replicas.starts,
      faults: kills.map(
        (k) => `t=${(k.atMs / 1000).toFixed(1)}s kill -9 node ${k.node} (${k.target} leader)`,
      ),
      seed: options.seed,
      finalStatuses,
      ...(tracked.completedAt !== undefined && drainedAt !== undefined
        ? { finalStatusWaitMs: tracked.completedAt - drainedAt }
        : {}),
    });
    const violations = [...report.violations];
    if (replicationFactors.length !== 1 || replicationFactors[0] !== REPLICATION_FACTOR)
      violations.push(`topics replicated ${replicationFactors.join('/')} times, not 3`);
    if (kills.length !== options.kills)
      violations.push(`${kills.length} of ${options.kills} leader kills carried out`);
    for (const kill of kills) {
      if (kill.ledPartitions === 0)
        violations.push(`node ${kill.node} led nothing of ${kill.target} when it was killed`);
      if (kill.leadersMovedMs === null)
        violations.push(
          `${kill.target} leadership did not leave node ${kill.node} while it was down`,
        );
      if (kill.inSyncAgainMs === null)
        violations.push(`node ${kill.node} did not catch up after its restart`);
    }
    failed = violations.length > 0;
    const figures = {
      ...report.figures,
      nodes: cluster.nodes.length,
      replicationFactors,
      kills,
      producerResends: producer.resends,
      ferryResends: await countLines(dir, replicas.names, 'sending their records again'),
    };
    const logsKeptIn =
      failed && options.keepLogsDir
        ? await keepRunFiles(dir, options.keepLogsDir, `ferry-cluster-chaos-${options.seed}`, {
            violations,
            figures,
          })
        : undefined;
    return { ok: !failed, violations, figures, ...(logsKeptIn ? { logsKeptIn } : {}) };
  } finally {
    stopped = true;
    removeExitHook();
    await replicas?.stopAll(5_000).catch(() => undefined);
    await producer?.close();
    await emulator?.stop().catch(() => undefined);
    await cluster?.stop(5_000).catch(() => undefined);
    await rm(dir, { recursive: true, force: true }).catch(() => undefined);
    if (failed) log('cleaned up after a failed run');
  }
}
