/**
 * The receipts section of `make bench` (docs/benchmarks.md, Receipts): the gateway's status
 * callbacks posted to ferry's callback route by 64 concurrent senders, receipts/s and
 * per-request latency, then the status topic read at read_committed to show that every
 * receipt is there once. The same load against a bare node:http server first gives the load
 * generator's own ceiling on this machine.
 *
 * Standalone: `node bench/receipts.ts` (its own broker unless FERRY_BENCH_KAFKA_BROKERS is set;
 * `--profile` writes ferry's CPU profile to .bench/profiles).
 */
import { mkdirSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Admin } from 'kafkajs';
import { brokerPorts, freePort, startBroker } from '../tools/kafka/broker.ts';
import { connectAdmin, createTopicsAndWait } from './bench-context.ts';
import { answers200, BenchChild } from './child-process.ts';
import { ferryEntryArgs, ferryEntryEnv, ferryEntryKind } from './ferry-entry.ts';
import { type HttpLoadResult, runHttpLoad } from './http-load.ts';
import { receiptPost } from './receipt-shapes.ts';
import { type LatencySummary, summariseLatencies } from './stats.ts';
import { countByKey } from './status-count.ts';

const TOKEN = 'bench-receipts-token';

export interface ReceiptsContext {
  readonly root: string;
  readonly logsDir: string;
  readonly profilesDir: string;
  readonly brokers: string;
  readonly admin: Admin;
  readonly runId: string;
  readonly createdTopics: string[];
}

export interface ReceiptsSettings {
  /** Distinct receipts of the measured run. */
  readonly receipts: number;
  /** Receipts of the warm-up, excluded from the figures (but checked on the topic too). */
  readonly warmupReceipts: number;
  readonly concurrency: number;
  readonly partitions: number;
  readonly cpuProfile: boolean;
}

export interface LoadFigures {
  readonly requests: number;
  readonly answered200: number;
  readonly perSecond: number;
  readonly latency: LatencySummary;
  /** CPU time of the server process per request, µs (user + system, from procfs). */
  readonly serverCpuUsPerRequest: number;
  /** The machine's 1-minute load average when the run ended (other processes share the cores). */
  readonly loadAverage: number;
}

export interface ReceiptsReport {
  readonly settings: ReceiptsSettings;
  /** The load generator against a bare node:http server answering 200. */
  readonly bareHttp: LoadFigures;
  readonly ferry: LoadFigures;
  /** Status events read at read_committed, and how many receipts had 0 or more than 1. */
  readonly check: {
    readonly expected: number;
    readonly events: number;
    readonly lost: number;
    readonly doubled: number;
  };
}

type Log = (line: string) => void;

/** Runs the measured load against `server` and sums it up with the server's CPU time. */
async function measure(
  server: BenchChild,
  run: () => Promise<HttpLoadResult>,
): Promise<LoadFigures> {
  const cpuBefore = server.usage()?.cpuSeconds ?? Number.NaN;
  const result = await run();
  const cpuSeconds = (server.usage()?.cpuSeconds ?? Number.NaN) - cpuBefore;
  const requests = result.statuses.length;
  return {
    requests,
    answered200: result.statuses.filter((s) => s === 200).length,
    perSecond: (requests / result.elapsedMs) * 1000,
    latency: summariseLatencies(Array.from(result.latenciesMs)),
    serverCpuUsPerRequest: (cpuSeconds * 1e6) / requests,
    loadAverage: loadavg()[0] ?? Number.NaN,
  };
}

/** One line of the bench table. */
export function describeLoad(label: string, f: LoadFigures): string {
  const round = (ms: number) => ms.toFixed(1);
  return `${label.padEnd(28)} ${String(Math.round(f.perSecond)).padStart(7)} req/s  p50 ${round(f.latency.p50Ms)} ms  p99 ${round(f.latency.p99Ms)} ms  max ${round(f.latency.maxMs)} ms  server cpu ${Math.round(f.serverCpuUsPerRequest)} µs/req  load avg ${f.loadAverage.toFixed(1)}  (${f.answered200}/${f.requests} answered 200)`;
}

/** The section's lines of the bench table. */
export function formatReceipts(report: ReceiptsReport): string {
  const { check } = report;
  return [
    `## receipts (${report.settings.receipts} distinct, ${report.settings.concurrency} concurrent senders, ${report.settings.partitions} partitions)`,
    describeLoad('load generator → bare http', report.bareHttp),
    describeLoad('load generator → ferry', report.ferry),
    `status topic (read_committed): ${check.events} events for ${check.expected} receipts; lost ${check.lost}, doubled ${check.doubled}`,
  ].join('\n');
}

async function startBare(context: ReceiptsContext): Promise<{ child: BenchChild; origin: string }> {
  const port = await freePort();
  const child = new BenchChild({
    name: 'bare-http',
    cwd: context.root,
    args: ['bench/bare-http-server.ts'],
    logFile: join(context.logsDir, 'bare-http.log'),
    env: { BARE_HTTP_PORT: String(port) },
  });
  const origin = `http://127.0.0.1:${port}`;
  await child.waitUntil('an answer', () => answers200(`${origin}/`), 30_000);
  return { child, origin };
}

/** Runs the section: the bare server, then ferry with callbacks on, then the topic check. */
export async function runReceiptsBench(
  context: ReceiptsContext,
  settings: ReceiptsSettings,
  log: Log,
): Promise<ReceiptsReport> {
  const path = `/callbacks/${TOKEN}`;
  const first = 1;
  const warmup = Array.from({ length: settings.warmupReceipts }, (_, i) =>
    receiptPost(path, first + i),
  );
  const measured = Array.from({ length: settings.receipts }, (_, i) =>
    receiptPost(path, first + settings.warmupReceipts + i),
  );
  const load = (origin: string, posts: typeof measured) =>
    runHttpLoad({
      origin,
      concurrency: settings.concurrency,
      posts: posts.map(({ path: p, contentType, body }) => ({ path: p, contentType, body })),
    });

  const bare = await startBare(context);
  let bareHttp: LoadFigures;
  try {
    await load(bare.origin, warmup);
    bareHttp = await measure(bare.child, () => load(bare.origin, measured));
  } finally {
    await bare.child.stop(5_000);
  }
  log(describeLoad('  load generator → bare http', bareHttp));

  const base = `bench.${context.runId}.receipts`;
  const topics = { status: `${base}.status`, unparsed: `${base}.unparsed` };
  await createTopicsAndWait(context.admin, context.brokers, [
    { topic: topics.status, numPartitions: settings.partitions, replicationFactor: 1 },
    { topic: topics.unparsed, numPartitions: 1, replicationFactor: 1 },
  ]);
  context.createdTopics.push(topics.status, topics.unparsed);
  const httpPort = await freePort();
  const origin = `http://127.0.0.1:${httpPort}`;
  const opsOrigin = `http://127.0.0.1:${await freePort()}`;
  const ferry = new BenchChild({
    name: 'ferry',
    cwd: context.root,
    args: [
      ...(settings.cpuProfile ? ['--cpu-prof', `--cpu-prof-dir=${context.profilesDir}`] : []),
      // As the container runs it (compiled, production flags) unless FERRY_BENCH_FROM=src.
      ...ferryEntryArgs(context.root, ferryEntryKind(process.env.FERRY_BENCH_FROM)),
    ],
    logFile: join(context.logsDir, 'ferry-receipts.log'),
    env: {
      FERRY_KAFKA_BROKERS: context.brokers,
      FERRY_KAFKA_GROUP: `${base}.group`,
      FERRY_TOPIC_COMMANDS: `${base}.commands`,
      FERRY_TOPIC_RESULTS: `${base}.results`,
      FERRY_TOPIC_STATUS: topics.status,
      FERRY_TOPIC_UNPARSED_CALLBACKS: topics.unparsed,
      FERRY_TOPIC_DLQ: `${base}.dlq`,
      FERRY_TOPIC_CONTROL: `${base}.control`,
      FERRY_TOPIC_DEDUPE: `${base}.dedupe`,
      FERRY_API_KEY: 'bench-receipts-api-key-0123456789',
      // No command arrives in this section: the gateway is never called.
      FERRY_SYNC_BASE_URL: 'http://127.0.0.1:9',
      FERRY_CALLBACK_PUBLIC_URL: origin,
      FERRY_CALLBACK_TOKEN: TOKEN,
      FERRY_HTTP_HOST: '127.0.0.1',
      FERRY_HTTP_PORT: String(httpPort),
      // The load generator is one client standing for a gateway's many senders: the
      // per-client cap (64) would bound the very concurrency measured, and refuse a sender
      // whose new connection arrives before its old one is seen closed.
      FERRY_HTTP_MAX_CONNECTIONS_PER_CLIENT: String(settings.concurrency * 2),
      FERRY_OPS_HOST: '127.0.0.1',
      FERRY_OPS_PORT: new URL(opsOrigin).port,
      FERRY_GRPC_HOST: '127.0.0.1',
      FERRY_GRPC_PORT: String(await freePort()),
      FERRY_ADMIN_LOOPBACK_ONLY: 'true',
      ...ferryEntryEnv(context.root, ferryEntryKind(process.env.FERRY_BENCH_FROM)),
    },
  });
  let ferryFigures: LoadFigures;
  try {
    await ferry.waitUntil('readiness', () => answers200(`${opsOrigin}/readyz`), 60_000);
    await load(origin, warmup);
    ferryFigures = await measure(ferry, () => load(origin, measured));
  } finally {
    await ferry.stop(30_000);
  }
  log(describeLoad('  load generator → ferry', ferryFigures));

  // Every receipt posted (warm-up included), each answered 200 once, must be there once.
  const counts = await countByKey(context.brokers, topics.status);
  const expectedKeys = [...warmup, ...measured].map((p) => p.key);
  let lost = 0;
  let doubled = 0;
  for (const key of expectedKeys) {
    const n = counts.get(key) ?? 0;
    if (n === 0) lost += 1;
    else if (n > 1) doubled += 1;
  }
  const events = [...counts.values()].reduce((sum, n) => sum + n, 0);
  const check = { expected: expectedKeys.length, events, lost, doubled };
  log(
    `  status topic: ${events} events for ${check.expected} receipts; lost ${lost}, doubled ${doubled}`,
  );
  return { settings, bareHttp, ferry: ferryFigures, check };
}

/** Defaults of the section; `quick` halves nothing: 20,000 receipts take seconds. */
export function receiptsSettings(cpuProfile: boolean): ReceiptsSettings {
  return { receipts: 20_000, warmupReceipts: 5_000, concurrency: 64, partitions: 6, cpuProfile };
}

async function standalone(): Promise<void> {
  const root = resolve(fileURLToPath(new URL('..', import.meta.url)));
  const stamp = new Date().toISOString().replace(/[:.]/g, '-').slice(0, 19);
  const logsDir = join(root, '.bench', 'logs', `${stamp}-receipts`);
  const profilesDir = join(root, '.bench', 'profiles');
  mkdirSync(logsDir, { recursive: true });
  const cpuProfile = process.argv.includes('--profile');
  if (cpuProfile) mkdirSync(profilesDir, { recursive: true });
  let brokers = process.env.FERRY_BENCH_KAFKA_BROKERS?.trim();
  let dir: string | undefined;
  let broker: Awaited<ReturnType<typeof startBroker>> | undefined;
  if (!brokers) {
    dir = await mkdtemp(join(tmpdir(), 'ferry-bench-kafka-'));
    broker = await startBroker({
      dir,
      ...(await brokerPorts()),
      heapMb: 1024,
    });
    brokers = broker.brokers;
  }
  const admin = await connectAdmin(brokers);
  const context: ReceiptsContext = {
    root,
    logsDir,
    profilesDir,
    brokers,
    admin,
    runId: `${stamp}-${process.pid}`,
    createdTopics: [],
  };
  try {
    const report = await runReceiptsBench(context, receiptsSettings(cpuProfile), (l) =>
      process.stdout.write(`${l}\n`),
    );
    process.stdout.write(`\n${formatReceipts(report)}\n`);
  } finally {
    if (!broker) await admin.deleteTopics({ topics: context.createdTopics }).catch(() => undefined);
    await admin.disconnect();
    await broker?.stop(15_000);
    if (dir) await rm(dir, { recursive: true, force: true });
  }
}

if (import.meta.main) {
  await standalone();
  process.exit(0);
}
