/**
 * What every scenario of `make bench` shares: the broker's admin client, the load
 * generator, unique command ids, topic creation, and the gateway emulator as a child
 * process whose counters tell how commands were grouped into envelopes.
 */
import { join } from 'node:path';
import { type Admin, type ITopicConfig, Kafka, logLevel } from 'kafkajs';
import { type AnswerTimesStats, SMALL_ENVELOPE_OPERATIONS } from '../src/emulator/answer-times.ts';
import { createTopicsAndWait as createTopicsWithLeaders } from '../src/kafka/topic-leaders.ts';
import { freePort } from '../tools/kafka/broker.ts';
import { answers200, BenchChild } from './child-process.ts';
import { BENCH_RCS_SENDER, BENCH_SENDER, type BenchCommand, benchCommands } from './command-mix.ts';
import type { LoadGenerator } from './load-generator.ts';
import { ResultCollector } from './result-collector.ts';
import type { SubjectStart, SubjectTopics } from './subjects.ts';

export const BENCH_API_KEY = 'bench-api-key-0123456789';
/** ferry's default linger (FERRY_BATCH_LINGER_MS), used for the latency targets. */
export const FERRY_DEFAULT_LINGER_MS = 10;

export interface BenchContext {
  readonly root: string;
  readonly logsDir: string;
  readonly profilesDir: string;
  readonly brokers: string;
  /** The broker's process when the bench started it (its CPU is measured per run), else undefined. */
  readonly brokerPid: number | undefined;
  readonly admin: Admin;
  readonly generator: LoadGenerator;
  readonly runId: string;
  /** Topics created, to delete at the end when the broker outlives the run. */
  readonly createdTopics: string[];
  /** Next unique command id. */
  nextId: number;
}

/**
 * Where a run's subject finds the broker, its topics and group (named after `base`), the
 * gateway, and where it logs; `extra` adds what one scenario sets (Node flags, variables).
 */
export function subjectStartOf(
  context: BenchContext,
  emulator: EmulatorChild,
  run: { readonly base: string; readonly logName: string; readonly topics: SubjectTopics },
  partitions: number,
  extra: Pick<SubjectStart, 'ferryNodeFlags' | 'ferryEnv'> = {},
): SubjectStart {
  return {
    root: context.root,
    logFile: join(context.logsDir, `${run.logName}.log`),
    brokers: context.brokers,
    group: `${run.base}.group`,
    topics: run.topics,
    gatewayUrl: emulator.url,
    apiKey: BENCH_API_KEY,
    partitions,
    ...extra,
  };
}

/** Unique ids for the next `count` commands. */
export function takeCommands(context: BenchContext, count: number): BenchCommand[] {
  const commands = benchCommands(context.nextId, count);
  context.nextId += count;
  return commands;
}

export async function createTopics(
  context: BenchContext,
  names: readonly string[],
  partitions: number,
): Promise<void> {
  await createTopicsAndWait(
    context.admin,
    context.brokers,
    names.map((topic) => ({ topic, numPartitions: partitions, replicationFactor: 1 })),
  );
  context.createdTopics.push(...names);
}

/** Creates topics and waits until every broker shows their leaders (see src/kafka/topic-leaders.ts). */
export function createTopicsAndWait(
  admin: Admin,
  brokers: string,
  topics: readonly ITopicConfig[],
): Promise<void> {
  return createTopicsWithLeaders(
    admin,
    { clientId: 'ferry-bench-topics', brokers: brokers.split(',') },
    topics,
  );
}

/** Records in `topic` (the sum of its partitions' end offsets; the topics are fresh, never compacted). */
export async function topicRecordCount(context: BenchContext, topic: string): Promise<number> {
  const offsets = await context.admin.fetchTopicOffsets(topic);
  return offsets.reduce((sum, o) => sum + Number(o.high), 0);
}

/** A reader of `topic` at read_committed, positioned at its start, joined. */
export async function startCollector(
  context: BenchContext,
  topic: string,
  groupId: string,
): Promise<ResultCollector> {
  const collector = new ResultCollector({ brokers: [context.brokers], topic, groupId });
  await collector.start();
  return collector;
}

/** Emulator counters since the last reset (GET /__emulator/stats). */
export interface GatewayCounts {
  readonly envelopes: number;
  readonly operations: number;
  /** Client ids the gateway accepted more than once. */
  readonly duplicateIds: number;
  /** The emulator's own answer times and event-loop delay (its view of the gateway latency). */
  readonly answerTimes: AnswerTimesStats;
}

/** The emulator's view: small envelopes (one command or a few), large ones, its event-loop delay. */
export function formatAnswerTimes(times: AnswerTimesStats): string {
  const { small, large, eventLoopDelay } = times;
  return (
    `envelopes of ≤ ${SMALL_ENVELOPE_OPERATIONS} operations p50/p99/max ${small.p50Ms}/${small.p99Ms}/${small.maxMs} ms (${small.count}), ` +
    `larger ${large.p50Ms}/${large.p99Ms}/${large.maxMs} ms (${large.count}); ` +
    `its event-loop delay p99/max ${eventLoopDelay.p99Ms}/${eventLoopDelay.maxMs} ms`
  );
}

/** The emulator as a child process, with its control route. */
export class EmulatorChild {
  readonly child: BenchChild;
  readonly url: string;

  private constructor(child: BenchChild, url: string) {
    this.child = child;
    this.url = url;
  }

  /** Starts `src/emulator/main.ts` on a free loopback port with the given latency. */
  static async start(context: BenchContext, latencyMs: number): Promise<EmulatorChild> {
    const port = await freePort();
    const child = new BenchChild({
      name: 'emulator',
      cwd: context.root,
      args: ['src/emulator/main.ts'],
      logFile: join(context.logsDir, `emulator-${latencyMs}ms.log`),
      env: {
        EMULATOR_API_KEY: BENCH_API_KEY,
        EMULATOR_HOST: '127.0.0.1',
        EMULATOR_PORT: String(port),
        EMULATOR_SENDERS: `${BENCH_SENDER},${BENCH_RCS_SENDER}`,
        EMULATOR_SEED: '7',
        EMULATOR_LATENCY_MS: String(latencyMs),
      },
    });
    const url = `http://127.0.0.1:${port}`;
    await child.waitUntil('an answer', () => answers200(`${url}/__emulator/knobs`), 30_000);
    return new EmulatorChild(child, url);
  }

  async reset(): Promise<void> {
    const response = await fetch(`${this.url}/__emulator/reset`, { method: 'POST' });
    await response.body?.cancel();
  }

  async counts(): Promise<GatewayCounts> {
    const response = await fetch(`${this.url}/__emulator/stats?sendsById=0`);
    const stats = (await response.json()) as {
      envelopes: { sync: number; async: number };
      operations: number;
      duplicates: string[];
      answerTimes: AnswerTimesStats;
    };
    return {
      envelopes: stats.envelopes.sync + stats.envelopes.async,
      operations: stats.operations,
      duplicateIds: stats.duplicates.length,
      answerTimes: stats.answerTimes,
    };
  }
}

/** A kafkajs admin client for creating and deleting the benchmark's topics. */
export async function connectAdmin(brokers: string): Promise<Admin> {
  const admin = new Kafka({
    clientId: 'ferry-bench-admin',
    brokers: [brokers],
    logLevel: logLevel.NOTHING,
  }).admin();
  await admin.connect();
  return admin;
}
