/**
 * A slow gateway meets a short session: two ferry replicas in one group, a gateway
 * that answers every request after `gatewayLatencyMs` (seconds, as a loaded gateway
 * does), a session timeout a few heartbeats long, and a backlog of SMS commands. With
 * `freezeMs`, one replica is frozen (SIGSTOP) while its envelopes are at the gateway
 * and thawed after its session expired, in the middle of the takeover.
 *
 * It checks what the group and the users see: every command gets exactly one result
 * within twice the time the gateway's capacity implies, no id reaches the gateway
 * twice, no command is looked up with `status` more than once, and the group
 * rebalances only when its membership changes (a join, an expulsion, a rejoin).
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { createEmulator, type Emulator } from '../../src/emulator/index.ts';
import { brokerPorts, type RunningBroker, startBroker } from '../../tools/kafka/broker.ts';
import { FIXTURE_SENDER, smsOperation } from '../fixtures/operations.ts';
import { loopbackEnv } from '../helpers/ferry.ts';
import { createTopics, groupLag, PlannedProducer, readTopic } from './chaos-kafka.ts';
import type { PlannedRecord } from './command-mix.ts';
import { killOnExit, ReplicaSet } from './ferry-replicas.ts';

const API_KEY = 'chaos-api-key-0123456789';
const REPLICAS = 2;
const FIRST_ID = 5_000_000;

export interface SlowGatewayOptions {
  readonly commands: number;
  readonly partitions: number;
  readonly gatewayLatencyMs: number;
  readonly sessionTimeoutMs: number;
  /** Below the session timeout (ferry refuses anything else). */
  readonly requestTimeoutMs: number;
  /** FERRY_CONCURRENCY of each replica. */
  readonly concurrency: number;
  /** FERRY_BATCH_MAX_OPS of each replica. */
  readonly batchMaxOps: number;
  /** SIGSTOP of the second replica for this long once sending is under way; 0: none. */
  readonly freezeMs: number;
  /** SIGTERM of the second replica once sending is under way, started again 2 s after it exits. */
  readonly sigterm?: boolean;
  /**
   * Answers that come after the client gave up (processed, then answered after `ms`,
   * longer than the session timeout), at this rate; then only exactly-once is checked.
   */
  readonly slowAnswers?: { readonly rate: number; readonly ms: number };
  readonly brokerHeapMb: number;
  readonly log: (line: string) => void;
  readonly signal?: AbortSignal;
}

/**
 * The setting both forms run in: a gateway answering in 3 s, a 6 s session, a 5 s
 * request timeout, and per replica 4 envelopes of 20 at the gateway at once.
 */
export const slowGatewaySetting = {
  partitions: 6,
  gatewayLatencyMs: 3_000,
  sessionTimeoutMs: 6_000,
  requestTimeoutMs: 5_000,
  concurrency: 4,
  batchMaxOps: 20,
} as const satisfies Partial<SlowGatewayOptions>;

export interface SlowGatewayFigures {
  commands: number;
  results: number;
  duplicateResults: number;
  missingResults: number;
  failedResults: number;
  idsSentTwice: number;
  /** Up to ten of them, for whoever looks into a failure. */
  someIdsSentTwice: string[];
  statusLookups: number;
  /** Most `status` lookups of one id, and how many handovers of its partition allow. */
  mostLookupsOfOneId: number;
  lookupsAllowedPerId: number;
  /** What the gateway's capacity implies for the backlog, and the bound (twice that). */
  idealMs: number;
  boundMs: number;
  /** From the first command produced to the last result committed. */
  tookMs: number | null;
  /** "partitions assigned" lines over all replica logs, and how many membership changes allow. */
  assignments: number;
  assignmentsAllowed: number;
  unexpectedExits: number;
  freezeMs: number;
  sigterm: boolean;
  slowAnswerRate: number;
}

export interface SlowGatewayReport {
  readonly ok: boolean;
  readonly violations: readonly string[];
  readonly figures: SlowGatewayFigures;
}

function plan(count: number): PlannedRecord[] {
  return Array.from({ length: count }, (_, index) => {
    const id = FIRST_ID + index;
    return {
      key: String(id),
      value: Buffer.from(JSON.stringify(smsOperation(id, { sms_message: `slow ${id}` }))),
      label: 'sms',
      reconcilableId: String(id),
      expectDeadLetter: false,
    };
  });
}

/** Counts "partitions assigned" lines, one per completed rebalance per replica. */
async function countAssignments(dir: string, names: readonly string[]): Promise<number> {
  let count = 0;
  for (const name of names) {
    const text = await readFile(join(dir, `${name}.log`), 'utf8').catch(() => '');
    for (const line of text.split('\n')) if (line.includes('"partitions assigned"')) count += 1;
  }
  return count;
}

export async function runSlowGateway(options: SlowGatewayOptions): Promise<SlowGatewayReport> {
  const { log } = options;
  const signal = options.signal ?? new AbortController().signal;
  const dir = await mkdtemp(join(tmpdir(), 'ferry-slow-gateway-'));
  let broker: RunningBroker | undefined;
  let emulator: Emulator | undefined;
  let replicas: ReplicaSet | undefined;
  let producer: PlannedProducer | undefined;
  /** On a violation the replica logs stay, for whoever looks into it. */
  let keepDir = false;
  const removeExitHook = killOnExit(() => [broker?.pid, ...(replicas?.pids() ?? [])]);
  try {
    broker = await startBroker({
      dir: join(dir, 'kafka'),
      ...(await brokerPorts()),
      heapMb: options.brokerHeapMb,
    });
    const brokers = broker.brokers;
    emulator = createEmulator({
      apiKey: API_KEY,
      senders: [FIXTURE_SENDER],
      seed: 1,
      knobs: {
        latencyMs: options.gatewayLatencyMs,
        callbackDelayMs: 20,
        viberReplyRate: 0,
        ...(options.slowAnswers
          ? { slowAnswerRate: options.slowAnswers.rate, slowAnswerMs: options.slowAnswers.ms }
          : {}),
      },
    });
    await emulator.start();
    const topics = {
      commands: 'slow.commands',
      results: 'slow.results',
      status: 'slow.status',
      dlq: 'slow.dlq',
    };
    const group = 'slow';
    await createTopics(brokers, Object.values(topics), options.partitions);

    replicas = new ReplicaSet({
      logDir: dir,
      env: {
        ...loopbackEnv({
          brokers,
          group,
          clientId: 'slow',
          topics,
          gatewayUrl: emulator.url,
          apiKey: API_KEY,
        }),
        FERRY_TOPIC_PARTITIONS: String(options.partitions),
        FERRY_BATCH_MAX_OPS: String(options.batchMaxOps),
        FERRY_BATCH_LINGER_MS: '10',
        FERRY_CONCURRENCY: String(options.concurrency),
        FERRY_REQUEST_TIMEOUT_MS: String(options.requestTimeoutMs),
        FERRY_KAFKA_SESSION_TIMEOUT_MS: String(options.sessionTimeoutMs),
        FERRY_SHUTDOWN_GRACE_MS: '5000',
        FERRY_LOG_LEVEL: process.env.SLOW_GATEWAY_LOG_LEVEL ?? 'info',
      },
    });
    const names = Array.from({ length: REPLICAS }, (_, i) => `replica-${i + 1}`);
    for (const name of names) replicas.add(name);
    // Both members in the group before the backlog arrives: the split is then steady.
    const joinedBy = Date.now() + 60_000;
    while ((await countAssignments(dir, names)) < REPLICAS && Date.now() < joinedBy) {
      await sleep(200, undefined, { signal });
    }
    await sleep(2_000, undefined, { signal });
    const assignmentsAtStart = await countAssignments(dir, names);

    const records = plan(options.commands);
    producer = new PlannedProducer(brokers);
    const startedAt = Date.now();
    await producer.send(topics.commands, records);
    log(`${records.length} commands produced; gateway answers in ${options.gatewayLatencyMs} ms`);

    // Each replica has `concurrency` envelopes of `batchMaxOps` at the gateway at once.
    const perRound = REPLICAS * options.concurrency * options.batchMaxOps;
    const idealMs = Math.ceil(options.commands / perRound) * options.gatewayLatencyMs;
    const boundMs = 2 * idealMs;

    let freezing: Promise<void> = Promise.resolve();
    if (options.freezeMs > 0) {
      // Once the first envelopes are at the gateway and before they are answered.
      await sleep(Math.min(1_500, options.gatewayLatencyMs / 2), undefined, { signal });
      log(`SIGSTOP replica-2 for ${options.freezeMs} ms`);
      freezing = replicas.freeze('replica-2', options.freezeMs);
    } else if (options.sigterm) {
      await sleep(Math.min(1_500, options.gatewayLatencyMs / 2), undefined, { signal });
      log('SIGTERM replica-2 mid-send; it starts again 2 s after it exits');
      freezing = replicas.terminate('replica-2', 2_000);
    }

    let tookMs: number | null = null;
    // Answers after the client gave up cost a request timeout and a lookup each: those
    // runs get more time, and are judged on exactly-once alone.
    const deadline = startedAt + (options.slowAnswers ? 180_000 : Math.max(boundMs * 2, 60_000));
    while (Date.now() < deadline) {
      signal.throwIfAborted();
      if ((await groupLag(brokers, group, topics.commands)) === 0) {
        tookMs = Date.now() - startedAt;
        break;
      }
      await sleep(250, undefined, { signal });
    }
    await freezing;
    log(tookMs === null ? 'the backlog did not drain' : `drained in ${tookMs} ms`);
    const assignments = (await countAssignments(dir, names)) - assignmentsAtStart;
    await replicas.stopAll(10_000);

    const results = await readTopic(
      brokers,
      topics.results,
      (read) => new Set(read.map((r) => r.key)).size >= records.length,
      { timeoutMs: 30_000, settleMs: 2_000 },
    ).catch(() =>
      readTopic(brokers, topics.results, () => true, { timeoutMs: 5_000, settleMs: 2_000 }),
    );
    const byKey = new Map<string, number>();
    let failedResults = 0;
    for (const result of results) {
      byKey.set(result.key, (byKey.get(result.key) ?? 0) + 1);
      const value = JSON.parse(result.value?.toString('utf8') ?? '{}') as { success?: unknown };
      if (value.success !== true) failedResults += 1;
    }
    const stats = emulator.stats();
    const lookups = Object.values(stats.statusLookupsById);
    const handovers = options.freezeMs > 0 || options.sigterm ? 2 : 0;
    const figures: SlowGatewayFigures = {
      commands: records.length,
      results: results.length,
      duplicateResults: [...byKey.values()].filter((n) => n > 1).length,
      missingResults: records.filter((r) => !byKey.has(r.key)).length,
      failedResults,
      idsSentTwice: Object.values(stats.sendsById).filter((n) => n > 1).length,
      someIdsSentTwice: Object.entries(stats.sendsById)
        .filter(([, n]) => n > 1)
        .slice(0, 10)
        .map(([id]) => id),
      statusLookups: lookups.reduce((sum, n) => sum + n, 0),
      mostLookupsOfOneId: Math.max(0, ...lookups),
      // A command is in doubt once per handover of its partition: to the survivor when
      // the frozen replica is expelled, and back when it rejoins.
      lookupsAllowedPerId: handovers,
      idealMs,
      boundMs,
      tookMs,
      assignments,
      // Freezing costs three: the survivor takes everything when the frozen replica is
      // expelled, and both get their share again when it rejoins.
      assignmentsAllowed: handovers > 0 ? 3 : 0,
      unexpectedExits: replicas.unexpectedExits.length,
      freezeMs: options.freezeMs,
      sigterm: options.sigterm ?? false,
      slowAnswerRate: options.slowAnswers?.rate ?? 0,
    };
    const violations: string[] = [];
    if (figures.missingResults > 0)
      violations.push(`${figures.missingResults} commands without a result`);
    if (figures.duplicateResults > 0)
      violations.push(`${figures.duplicateResults} commands with more than one result`);
    if (figures.failedResults > 0)
      violations.push(`${figures.failedResults} results that are not a success`);
    if (figures.idsSentTwice > 0)
      violations.push(`${figures.idsSentTwice} ids reached the gateway twice`);
    // Answers after the client gave up are looked up on every retry, and take their own
    // time: with them, only exactly-once is checked.
    const timed = !options.slowAnswers;
    if (timed && figures.mostLookupsOfOneId > figures.lookupsAllowedPerId) {
      violations.push(
        `an id was looked up ${figures.mostLookupsOfOneId} times; handovers explain ${figures.lookupsAllowedPerId}`,
      );
    }
    if (tookMs === null || (timed && tookMs > boundMs)) {
      violations.push(
        `results took ${tookMs ?? 'forever'} ms; the gateway's capacity implies ${idealMs}, bound ${boundMs}`,
      );
    }
    if (assignments > figures.assignmentsAllowed) {
      violations.push(
        `${assignments} assignments after the start; membership changes explain ${figures.assignmentsAllowed}`,
      );
    }
    if (figures.unexpectedExits > 0)
      violations.push(`${figures.unexpectedExits} replicas exited on their own`);
    if (violations.length > 0) {
      keepDir = true;
      violations.push(`logs kept in ${dir}`);
    }
    return { ok: violations.length === 0, violations, figures };
  } finally {
    removeExitHook();
    await replicas?.stopAll(5_000).catch(() => undefined);
    await producer?.close();
    await emulator?.stop().catch(() => undefined);
    await broker?.stop(15_000).catch(() => undefined);
    if (!keepDir) await rm(dir, { recursive: true, force: true }).catch(() => undefined);
  }
}
