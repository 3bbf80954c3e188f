/**
 * One bounded chaos run of the exactly-once checks (docs/chaos.md): its own Kafka broker on free loopback ports in a
 * temporary folder, the gateway emulator in-process with fault knobs, ferry replicas
 * as child processes in one group; commands and bad input produced over a window
 * while replicas are killed with SIGKILL, the broker restarts once and a replica is
 * added; then it waits for the group's lag to drain (and, with final status tracking,
 * for the final status events), reads back what ferry committed, and checks
 * exactly-once. Everything it started is stopped and removed.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { createEmulator, type Emulator } from '../../src/emulator/index.ts';
import { brokerPorts, type RunningBroker, startBroker } from '../../tools/kafka/broker.ts';
import { FIXTURE_RCS_SENDER, FIXTURE_SENDER } from '../fixtures/operations.ts';
import { loopbackEnv } from '../helpers/ferry.ts';
import { type BadInputOptions, buildBadInputs } from './bad-inputs.ts';
import {
  awaitFinalStatuses,
  createTopics,
  groupLag,
  PlannedProducer,
  type ReadBack,
  readTopic,
  recordKeys,
  tryProduceOnce,
} from './chaos-kafka.ts';
import { buildCommandMix, type PlannedRecord } from './command-mix.ts';
import { killOnExit, ReplicaSet } from './ferry-replicas.ts';
import { KAFKA_CODECS, kcatProduce } from './kcat-producer.ts';
import { keepRunFiles, saveReplicaMetrics } from './kept-logs.ts';
import { type LateCopies, writeLateCopies } from './late-copies.ts';
import { createSeededRandom, type SeededRandom } from './seeded-random.ts';
import { type ChaosFigures, verifyRun } from './verify-run.ts';

const API_KEY = 'chaos-api-key-0123456789';
/** Longest wait after the drain for the final status events (lookups that fail are tried again within 30 s). */
export const FINAL_STATUS_WAIT_MS = 120_000;

export interface ChaosOptions {
  /** Well-formed commands produced. */
  readonly commands: number;
  readonly partitions: number;
  /** Replicas at the start (one more is added during the run when `addReplica`). */
  readonly replicas: number;
  /** `kill -9` faults, each followed by a restart of that replica. */
  readonly kills: number;
  readonly brokerRestarts: number;
  readonly addReplica: boolean;
  /** Commands are produced evenly over this window; faults fall inside it. */
  readonly produceWindowMs: number;
  readonly seed: number;
  readonly badInput: BadInputOptions;
  /**
   * Well-formed commands per codec (gzip, snappy, lz4, zstd) that kcat produces as
   * compressed batches instead of kafkajs; 0 for none.
   */
  readonly compressedPerCodec: number;
  /** Size of the record tried past the broker's 1 MB limit (0: not tried). */
  readonly oversizeBytes: number;
  /** FERRY_REQUEST_TIMEOUT_MS of the replicas; the emulator holds timed-out requests a bit longer. */
  readonly requestTimeoutMs: number;
  readonly http500Rate: number;
  readonly timeoutRate: number;
  readonly lostAnswerRate: number;
  /** Time allowed from the last fault to a drained lag. */
  readonly drainTimeoutMs: number;
  /** Heap of the broker JVM. */
  readonly brokerHeapMb: number;
  /**
   * FERRY_STATUS_TRACKING on, with lookups 2 s after a send (no callbacks here): the run
   * waits up to FINAL_STATUS_WAIT_MS after the drain for every final event, then checks them.
   */
  readonly statusTracking?: boolean;
  /**
   * After the drain, this many of the earliest commands that reached the gateway are
   * written again with kcat (late-copies.ts) and must be answered `duplicate`; 0: none.
   */
  readonly lateCopies?: number;
  /** The earliest the late copies are written, in ms from the start of production. */
  readonly lateCopiesAfterMs?: number;
  /** Extra FERRY_* variables for every replica. */
  readonly ferryEnv?: Readonly<Record<string, string>>;
  /** Where replica and broker logs are copied when the run fails (none: not kept). */
  readonly keepLogsDir?: string;
  /** Progress lines. */
  readonly log: (line: string) => void;
  /**
   * The faults and their times (ms after the start of production), instead of the random
   * plan; `kills`, `brokerRestarts` and `addReplica` are then not used.
   */
  readonly faultPlan?: readonly PlannedFault[];
  /** Aborts the run at its next wait; it still cleans up. */
  readonly signal?: AbortSignal;
}

export interface ChaosReport {
  readonly ok: boolean;
  readonly violations: readonly string[];
  readonly figures: ChaosFigures;
  /** Where the logs were kept on failure. */
  readonly logsKeptIn?: string;
}

export type FaultKind = 'kill' | 'broker' | 'add';

export interface PlannedFault {
  readonly kind: FaultKind;
  readonly atMs: number;
}

/** Fault times: [15%, 85%] of the window cut in one equal slot per fault, a random point in the middle 80% of each; kinds in a random order. */
function planFaults(options: ChaosOptions, random: SeededRandom): PlannedFault[] {
  const kinds: FaultKind[] = [
    ...Array.from({ length: options.kills }, () => 'kill' as const),
    ...Array.from({ length: options.brokerRestarts }, () => 'broker' as const),
    ...(options.addReplica ? ['add' as const] : []),
  ];
  for (let i = kinds.length - 1; i > 0; i -= 1) {
    const j = random.int(0, i);
    [kinds[i], kinds[j]] = [kinds[j] as FaultKind, kinds[i] as FaultKind];
  }
  const slot = 0.7 / Math.max(1, kinds.length);
  return kinds.map((kind, index) => ({
    kind,
    // One random point per slot: random, but never two faults on top of each other.
    atMs: Math.round(options.produceWindowMs * (0.15 + slot * (index + 0.1 + 0.8 * random.next()))),
  }));
}

/** Puts the bad-input records at random places among the commands. */
function interleave(
  commands: readonly PlannedRecord[],
  bad: readonly PlannedRecord[],
  random: SeededRandom,
): PlannedRecord[] {
  const out = [...commands];
  for (const record of bad) out.splice(random.int(0, out.length), 0, record);
  return out;
}

/** A gate the producer waits at while the broker restarts. */
class Gate {
  #open = true;
  #waiters: (() => void)[] = [];
  close(): void {
    this.#open = false;
  }
  open(): void {
    this.#open = true;
    for (const wake of this.#waiters.splice(0)) wake();
  }
  async passed(): Promise<void> {
    if (this.#open) return;
    await new Promise<void>((resolve) => this.#waiters.push(resolve));
  }
}

/**
 * Runs the whole scenario and checks it. Never throws for a violation: the report
 * says `ok: false` and lists them. @throws Error when the set-up itself fails
 * (the broker does not start, a drain times out is a violation, not a throw).
 */
export async function runChaos(options: ChaosOptions): Promise<ChaosReport> {
  const { log } = options;
  const random = createSeededRandom(options.seed);
  const dir = await mkdtemp(join(tmpdir(), 'ferry-chaos-'));
  const brokerOptions = {
    dir: join(dir, 'kafka'),
    ...(await brokerPorts()),
    heapMb: options.brokerHeapMb,
  };
  let broker: RunningBroker | undefined;
  let emulator: Emulator | undefined;
  let replicas: ReplicaSet | undefined;
  let producer: PlannedProducer | undefined;
  let stopped = false;
  let failed = true;
  const signal = options.signal ?? new AbortController().signal;
  const wait = (ms: number) => sleep(Math.max(0, ms), undefined, { signal });
  const removeExitHook = killOnExit(() => [broker?.pid, ...(replicas?.pids() ?? [])]);
  try {
    const startedAt = Date.now();
    broker = await startBroker(brokerOptions);
    const brokers = broker.brokers;
    log(`broker ${brokers} up in ${Date.now() - startedAt} ms (${dir})`);

    emulator = createEmulator({
      apiKey: API_KEY,
      senders: [FIXTURE_SENDER, FIXTURE_RCS_SENDER],
      seed: options.seed,
      knobs: {
        http500Rate: options.http500Rate,
        timeoutRate: options.timeoutRate,
        lostAnswerRate: options.lostAnswerRate,
        // Past ferry's request timeout, so a timed-out request is really abandoned by ferry.
        hangMs: options.requestTimeoutMs + 300,
        latencyMs: 2,
        callbackDelayMs: 20,
        viberReplyRate: 0,
      },
    });
    await emulator.start();

    const topics = {
      commands: 'chaos.commands',
      results: 'chaos.results',
      status: 'chaos.status',
      dlq: 'chaos.dlq',
    };
    const group = 'chaos';
    await createTopics(brokers, Object.values(topics), options.partitions);

    const commands = buildCommandMix(options.commands, random);
    const bad = buildBadInputs(options.badInput, random);
    const plan = interleave(commands, bad, random);
    // Some commands arrive from a producer that is not kafkajs, in every codec.
    const compressed = KAFKA_CODECS.map((codec, index) => ({
      codec,
      records: commands
        .filter((record) => !record.headers)
        .slice(index * options.compressedPerCodec, (index + 1) * options.compressedPerCodec),
    }));
    const viaKcat = new Set(compressed.flatMap((batch) => batch.records));
    const viaKafkajs = plan.filter((record) => !viaKcat.has(record));
    log(
      `planned ${commands.length} commands (${viaKcat.size} through kcat in ${KAFKA_CODECS.join(', ')}) and ${bad.length} bad-input records, seed ${options.seed}`,
    );

    let oversize: { bytes: number; accepted: boolean; error?: string } | undefined;
    if (options.oversizeBytes > 0) {
      const outcome = await tryProduceOnce(
        brokers,
        topics.commands,
        'oversize',
        Buffer.alloc(options.oversizeBytes, 0x61),
      );
      oversize = { bytes: options.oversizeBytes, ...outcome };
      log(
        `a ${options.oversizeBytes}-byte record: ${outcome.accepted ? 'ACCEPTED' : `refused (${outcome.error})`}`,
      );
    }

    const env: Record<string, string> = {
      ...loopbackEnv({
        brokers,
        group,
        clientId: 'chaos',
        topics,
        gatewayUrl: emulator.url,
        apiKey: API_KEY,
      }),
      FERRY_TOPIC_PARTITIONS: String(options.partitions),
      FERRY_BATCH_MAX_OPS: '50',
      FERRY_BATCH_LINGER_MS: '20',
      FERRY_CONCURRENCY: '8',
      FERRY_REQUEST_TIMEOUT_MS: String(options.requestTimeoutMs),
      FERRY_MAX_ATTEMPTS: '8',
      FERRY_RETRY_BASE_MS: '50',
      FERRY_RETRY_MAX_MS: '1000',
      FERRY_SHUTDOWN_GRACE_MS: '5000',
      FERRY_KAFKA_SESSION_TIMEOUT_MS: '6000',
      FERRY_KAFKA_MAX_BYTES_PER_PARTITION: String(64 * 1024),
      FERRY_LOG_LEVEL: 'info',
      ...(options.statusTracking
        ? { FERRY_STATUS_TRACKING: 'true', FERRY_STATUS_POLL_AFTER_MS: '2000' }
        : {}),
      ...options.ferryEnv,
    };
    // Final events are checked when the replicas track them (FERRY_TOPIC_STATUS_FINAL from loopbackEnv).
    const finalTopic =
      env.FERRY_STATUS_TRACKING === 'true' ? env.FERRY_TOPIC_STATUS_FINAL : undefined;
    replicas = new ReplicaSet({ logDir: dir, env });
    const names = Array.from({ length: options.replicas }, (_, i) => `replica-${i + 1}`);
    for (const name of names) replicas.add(name);

    // Produce evenly over the window, pausing while the broker is down.
    const gate = new Gate();
    producer = new PlannedProducer(brokers);
    const activeProducer = producer;
    const chunks = Math.max(1, Math.round(options.produceWindowMs / 250));
    const chunkSize = Math.ceil(viaKafkajs.length / chunks);
    const runStart = Date.now();
    let inFlight: Promise<void> = Promise.resolve();
    let produced = 0;
    const production = (async () => {
      for (let i = 0; i < viaKafkajs.length && !stopped; i += chunkSize) {
        const due = runStart + (i / chunkSize) * 250;
        if (due > Date.now()) await wait(due - Date.now());
        await gate.passed();
        const chunk = viaKafkajs.slice(i, i + chunkSize);
        inFlight = activeProducer.send(topics.commands, chunk);
        await inFlight;
        produced += chunk.length;
        // Halfway through the window, the compressed batches from kcat.
        if (i < viaKafkajs.length / 2 && i + chunkSize >= viaKafkajs.length / 2) {
          for (const { codec, records } of compressed) {
            if (records.length === 0) continue;
            await gate.passed();
            inFlight = kcatProduce(brokers, topics.commands, codec, records);
            await inFlight;
            produced += records.length;
          }
        }
      }
    })();

    const faults = options.faultPlan ?? planFaults(options, random);
    const brokerDownWindows: { fromMs: number; toMs: number }[] = [];
    let lastFaultAt = runStart;
    const faultLog: string[] = [];
    const activeReplicas = replicas;
    const injection = (async () => {
      for (const fault of faults) {
        const due = runStart + fault.atMs;
        if (due > Date.now()) await wait(due - Date.now());
        if (stopped) return;
        const at = ((Date.now() - runStart) / 1000).toFixed(1);
        if (fault.kind === 'kill') {
          const victim = random.pick(activeReplicas.names);
          const restartAfterMs = random.int(200, 3000);
          log(`t=${at}s kill -9 ${victim} (restart after ${restartAfterMs} ms)`);
          faultLog.push(`t=${at}s kill -9 ${victim}`);
          await activeReplicas.kill9(victim, restartAfterMs);
        } else if (fault.kind === 'add') {
          const name = `replica-${activeReplicas.names.length + 1}`;
          log(`t=${at}s adding ${name} (rebalance)`);
          faultLog.push(`t=${at}s added ${name}`);
          activeReplicas.add(name);
        } else {
          log(`t=${at}s restarting the Kafka broker`);
          gate.close();
          await inFlight.catch(() => undefined);
          const down = Date.now();
          await broker?.stop(20_000);
          broker = await startBroker(brokerOptions);
          brokerDownWindows.push({ fromMs: down, toMs: Date.now() });
          gate.open();
          log(`broker back after ${Date.now() - down} ms`);
          faultLog.push(`t=${at}s broker restart (${Date.now() - down} ms down)`);
        }
        lastFaultAt = Date.now();
      }
    })();
    // Both are awaited; a handler on the second keeps an abort from being an unhandled rejection.
    injection.catch(() => undefined);
    await production;
    const productionEndAt = Date.now();
    await injection;
    log(
      `produced ${produced} records in ${Date.now() - runStart} ms; faults done; waiting for the lag to drain`,
    );

    // Drained: the group's committed offsets reached the end of every partition.
    const awaitDrain = async (deadline: number): Promise<number | undefined> => {
      let lastLag: number | string | undefined;
      let lastLagLog = Date.now();
      while (Date.now() < deadline) {
        signal.throwIfAborted();
        lastLag = await groupLag(brokers, group, topics.commands);
        if (lastLag === 0) return Date.now();
        if (Date.now() - lastLagLog > 10_000) {
          lastLagLog = Date.now();
          log(`lag: ${lastLag}`);
        }
        await wait(250);
      }
      log(`the lag did not drain: ${lastLag} left`);
      return undefined;
    };
    let drainedAt = await awaitDrain(lastFaultAt + options.drainTimeoutMs);
    if (drainedAt === undefined) await saveReplicaMetrics(dir, replicas.names);
    else log(`lag drained ${drainedAt - lastFaultAt} ms after the last fault`);

    // Copies of the earliest commands, minutes after their firsts and after every fault.
    let lateCopies: LateCopies | undefined;
    if (drainedAt !== undefined && (options.lateCopies ?? 0) > 0 && env.FERRY_DEDUPE !== 'false') {
      // Minutes, not seconds: the firsts were written at the start of the window.
      await wait(runStart + (options.lateCopiesAfterMs ?? 0) - Date.now());
      lateCopies = await writeLateCopies({
        brokers,
        commandsTopic: topics.commands,
        resultsTopic: topics.results,
        candidates: viaKafkajs
          .filter((r) => r.reconcilableId !== undefined && !r.headers && !r.expectDeadLetter)
          .slice(0, (options.lateCopies ?? 0) * 2),
        count: options.lateCopies ?? 0,
        firstWrittenAt: runStart,
      });
      log(
        `wrote ${lateCopies.keys.length} late copies (kcat), ${lateCopies.secondsAfterFirst} s after their firsts`,
      );
      const lateDrainedAt = await awaitDrain(Date.now() + 60_000);
      if (lateDrainedAt === undefined) drainedAt = undefined;
    }

    const plannedKeys = new Set(plan.map((r) => r.key));
    // The replicas finalize what they sent while they run: wait for it (bounded) before stopping them.
    const tracked = finalTopic
      ? await awaitFinalStatuses(
          brokers,
          { results: topics.results, final: finalTopic },
          plannedKeys.size,
          drainedAt === undefined ? 10_000 : FINAL_STATUS_WAIT_MS,
          log,
        )
      : undefined;
    await replicas.stopAll(10_000);
    const commandKeys = await recordKeys(brokers, topics.commands, plan.length);
    const results = await readTopic(
      brokers,
      topics.results,
      (records: readonly ReadBack[]) => new Set(records.map((r) => r.key)).size >= plannedKeys.size,
      { timeoutMs: drainedAt === undefined ? 10_000 : 60_000, settleMs: 3_000 },
    ).catch((error: unknown) => {
      log(String(error));
      return readTopic(brokers, topics.results, () => true, { timeoutMs: 5_000, settleMs: 5_000 });
    });
    const expectedDeadLetters = plan.filter((r) => r.expectDeadLetter).length;
    const deadLetters = await readTopic(
      brokers,
      topics.dlq,
      (records) => records.length >= expectedDeadLetters,
      { timeoutMs: 20_000, settleMs: 2_000 },
    ).catch(() =>
      readTopic(brokers, topics.dlq, () => true, { timeoutMs: 5_000, settleMs: 3_000 }),
    );
    const finalStatuses = finalTopic
      ? await readTopic(
          brokers,
          finalTopic,
          (records) => records.length >= (tracked?.events ?? 0),
          { timeoutMs: 30_000, settleMs: 3_000 },
        ).catch(() =>
          readTopic(brokers, finalTopic, () => true, { timeoutMs: 5_000, settleMs: 5_000 }),
        )
      : undefined;
    const stats = emulator.stats();

    const report = verifyRun({
      plan,
      commandKeys,
      results,
      deadLetters,
      sendsById: stats.sendsById,
      emulatorFaults: stats.faults,
      emulatorRequests: stats.requests,
      drainMs: drainedAt === undefined ? undefined : drainedAt - lastFaultAt,
      drainMsAfterLastRecord: drainedAt === undefined ? undefined : drainedAt - productionEndAt,
      unexpectedExits: replicas.unexpectedExits,
      brokerDownWindows,
      replicaStarts: replicas.starts,
      faults: faultLog,
      seed: options.seed,
      ...(oversize ? { oversize } : {}),
      ...(finalStatuses ? { finalStatuses } : {}),
      ...(lateCopies ? { lateCopies } : {}),
      dedupe: env.FERRY_DEDUPE !== 'false',
      ...(tracked?.completedAt !== undefined && drainedAt !== undefined
        ? { finalStatusWaitMs: tracked.completedAt - drainedAt }
        : {}),
    });
    failed = report.violations.length > 0;
    const logsKeptIn =
      failed && options.keepLogsDir
        ? await keepRunFiles(dir, options.keepLogsDir, `ferry-chaos-${options.seed}`, {
            violations: report.violations,
            figures: report.figures,
          })
        : undefined;
    return {
      ok: !failed,
      violations: report.violations,
      figures: report.figures,
      ...(logsKeptIn ? { logsKeptIn } : {}),
    };
  } finally {
    stopped = true;
    removeExitHook();
    await replicas?.stopAll(5_000).catch(() => undefined);
    await producer?.close();
    await emulator?.stop().catch(() => undefined);
    await broker?.stop(15_000).catch(() => undefined);
    await rm(dir, { recursive: true, force: true }).catch(() => undefined);
    if (failed) log('cleaned up after a failed run');
  }
}
