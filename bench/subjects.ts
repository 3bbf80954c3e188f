/**
 * The three systems the benchmark compares, each started as its own child process
 * on a run's topics and the shared emulator: ferry (`src/main.ts`, defaults), the
 * peer (Redpanda Connect with bench/peer/redpanda-connect.yaml) and the baseline
 * (bench/baseline-consumer.ts, one request per command).
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { freePort } from '../tools/kafka/broker.ts';
import { answers200, BenchChild } from './child-process.ts';
import { ferryEntryArgs, ferryEntryEnv, ferryEntryKind } from './ferry-entry.ts';

export const SUBJECTS = ['ferry', 'ferry-before', 'peer', 'baseline'] as const;
export type SubjectName = (typeof SUBJECTS)[number];

/** Labels in the table and logs. */
export const SUBJECT_LABELS: Readonly<Record<SubjectName, string>> = {
  ferry: 'ferry',
  'ferry-before': 'ferry before',
  peer: 'redpanda-connect',
  baseline: 'kafkajs plain',
};

/** Where tools/bench/build-redpanda-connect.sh puts the peer. */
export function peerBinary(root: string): string {
  return join(root, '.cache', 'bin', 'redpanda-connect');
}

/** A run's topics; ferry also gets status, dead-letter and control topics of its own. */
export interface SubjectTopics {
  readonly commands: string;
  readonly results: string;
  readonly status: string;
  readonly dlq: string;
  readonly control: string;
}

export function subjectTopics(base: string): SubjectTopics {
  return {
    commands: `${base}.commands`,
    results: `${base}.results`,
    status: `${base}.status`,
    dlq: `${base}.dlq`,
    control: `${base}.control`,
  };
}

export interface SubjectStart {
  readonly root: string;
  readonly logFile: string;
  readonly brokers: string;
  readonly group: string;
  readonly topics: SubjectTopics;
  readonly gatewayUrl: string;
  readonly apiKey: string;
  readonly partitions: number;
  /** Extra Node flags for ferry (e.g. --cpu-prof). */
  readonly ferryNodeFlags?: readonly string[];
  /** ferry only: variables a scenario sets beside the defaults (the urgent lane's topic). */
  readonly ferryEnv?: Readonly<Record<string, string>>;
}

/** A started subject and how to tell it is ready to consume. */
export interface StartedSubject {
  readonly child: BenchChild;
  /** Resolves once the subject answers its readiness probe. @throws when it exits or times out. */
  ready(timeoutMs: number): Promise<void>;
  /** ferry only: its Prometheus endpoint, for its own per-stage figures. */
  readonly metricsUrl?: string;
}

/**
 * Another build of ferry, for a before/after comparison in one run: FERRY_BENCH_BEFORE
 * names a checkout of an earlier commit with its dependencies installed and dist/ built.
 */
export function beforeRoot(): string {
  const dir = process.env.FERRY_BENCH_BEFORE?.trim();
  if (!dir)
    throw new Error(
      'the ferry-before subject needs FERRY_BENCH_BEFORE (an earlier checkout, built)',
    );
  return dir;
}

async function startFerry(s: SubjectStart, name = 'ferry'): Promise<StartedSubject> {
  const opsPort = await freePort();
  const child = new BenchChild({
    name,
    cwd: s.root,
    args: [
      ...(s.ferryNodeFlags ?? []),
      // As the container runs it (compiled, production flags) unless FERRY_BENCH_FROM=src.
      ...ferryEntryArgs(s.root, ferryEntryKind(process.env.FERRY_BENCH_FROM)),
    ],
    logFile: s.logFile,
    // Only what ferry needs to find its broker, topics, gateway and ports: every tuning knob at its default.
    env: {
      FERRY_KAFKA_BROKERS: s.brokers,
      FERRY_KAFKA_GROUP: s.group,
      FERRY_TOPIC_COMMANDS: s.topics.commands,
      FERRY_TOPIC_RESULTS: s.topics.results,
      FERRY_TOPIC_STATUS: s.topics.status,
      FERRY_TOPIC_DLQ: s.topics.dlq,
      // A fleet of its own: a pause left in the default control topic must not hold a run.
      FERRY_TOPIC_CONTROL: s.topics.control,
      // Each run's ids apart: a later run's command ids are not copies of an earlier run's.
      FERRY_TOPIC_DEDUPE: `${s.topics.commands}.dedupe`,
      // The same for final status tracking (when an A/B turns it on): its own messages only.
      FERRY_TOPIC_TRACKING: `${s.topics.commands}.tracking`,
      FERRY_TOPIC_STATUS_FINAL: `${s.topics.status}.final`,
      FERRY_API_KEY: s.apiKey,
      FERRY_SYNC_BASE_URL: s.gatewayUrl,
      FERRY_HTTP_HOST: '127.0.0.1',
      FERRY_HTTP_PORT: String(await freePort()),
      FERRY_OPS_HOST: '127.0.0.1',
      FERRY_OPS_PORT: String(opsPort),
      FERRY_GRPC_HOST: '127.0.0.1',
      FERRY_GRPC_PORT: String(await freePort()),
      FERRY_ADMIN_LOOPBACK_ONLY: 'true',
      ...ferryEntryEnv(s.root, ferryEntryKind(process.env.FERRY_BENCH_FROM)),
      ...s.ferryEnv,
      // For experiments with V8 flags (heap caps and the like) on ferry alone.
      ...(process.env.FERRY_BENCH_NODE_OPTIONS
        ? { NODE_OPTIONS: process.env.FERRY_BENCH_NODE_OPTIONS }
        : {}),
      // For A/B runs of ferry's own knobs: `FERRY_BENCH_FERRY_ENV="FERRY_X=1 FERRY_Y=2"`.
      ...ferryEnvOverrides(process.env.FERRY_BENCH_FERRY_ENV),
      // The same for the earlier build alone: the same build with a knob off is an A/B in one run.
      ...(name === 'ferry-before' ? ferryEnvOverrides(process.env.FERRY_BENCH_BEFORE_ENV) : {}),
    },
  });
  return {
    child,
    ready: (timeoutMs) =>
      child.waitUntil(
        'readiness',
        () => answers200(`http://127.0.0.1:${opsPort}/readyz`),
        timeoutMs,
      ),
    metricsUrl: `http://127.0.0.1:${opsPort}/metrics`,
  };
}

async function startPeer(s: SubjectStart): Promise<StartedSubject> {
  const binary = peerBinary(s.root);
  if (!existsSync(binary)) {
    throw new Error(`${binary} is missing: run tools/bench/build-redpanda-connect.sh`);
  }
  const httpAddress = `127.0.0.1:${await freePort()}`;
  const child = new BenchChild({
    name: 'redpanda-connect',
    command: binary,
    cwd: s.root,
    args: ['run', join(s.root, 'bench', 'peer', 'redpanda-connect.yaml')],
    logFile: s.logFile,
    env: {
      PEER_BROKERS: s.brokers,
      PEER_GROUP: s.group,
      PEER_TOPIC_COMMANDS: s.topics.commands,
      PEER_TOPIC_RESULTS: s.topics.results,
      PEER_GATEWAY_URL: s.gatewayUrl,
      PEER_API_KEY: s.apiKey,
      PEER_HTTP_ADDRESS: httpAddress,
      PEER_LOG_LEVEL: process.env.FERRY_BENCH_PEER_LOG_LEVEL ?? 'WARN',
    },
  });
  return {
    child,
    // 200 once the input and the output are connected.
    ready: (timeoutMs) =>
      child.waitUntil('readiness', () => answers200(`http://${httpAddress}/ready`), timeoutMs),
  };
}

async function startBaseline(s: SubjectStart): Promise<StartedSubject> {
  const child = new BenchChild({
    name: 'baseline',
    cwd: s.root,
    args: ['--disable-warning=TimeoutNegativeWarning', 'bench/baseline-consumer.ts'],
    logFile: s.logFile,
    env: {
      BASELINE_BROKERS: s.brokers,
      BASELINE_GROUP: s.group,
      BASELINE_TOPIC_COMMANDS: s.topics.commands,
      BASELINE_TOPIC_RESULTS: s.topics.results,
      BASELINE_GATEWAY_URL: s.gatewayUrl,
      BASELINE_API_KEY: s.apiKey,
      BASELINE_PARTITIONS: String(s.partitions),
    },
  });
  return { child, ready: (timeoutMs) => child.waitForLog('baseline ready', timeoutMs) };
}

/** Spawns the subject (it starts consuming at once); call `ready` to wait for it. */
export function startSubject(name: SubjectName, s: SubjectStart): Promise<StartedSubject> {
  switch (name) {
    case 'ferry':
      return startFerry(s);
    case 'ferry-before':
      return startFerry({ ...s, root: beforeRoot() }, 'ferry-before');
    case 'peer':
      return startPeer(s);
    case 'baseline':
      return startBaseline(s);
  }
}

/** `FERRY_X=1 FERRY_Y=2` as variables; only FERRY_ ones, so a typo cannot change the bench. */
export function ferryEnvOverrides(text: string | undefined): Record<string, string> {
  const overrides: Record<string, string> = {};
  for (const pair of (text ?? '').split(/\s+/).filter(Boolean)) {
    const [key, value] = pair.split(/=(.*)/s, 2);
    if (!key?.startsWith('FERRY_') || value === undefined) {
      throw new Error(`FERRY_BENCH_FERRY_ENV wants FERRY_NAME=value pairs, got "${pair}"`);
    }
    overrides[key] = value;
  }
  return overrides;
}
