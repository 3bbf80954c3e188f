/**
 * ferry's resident memory at rest: starts a temporary broker, the gateway emulator and
 * ferry (as the container runs it), waits until ferry is ready and has sat idle, and
 * prints its RSS, CPU time and how often its main thread woke up. The figure behind the memory request in
 * deploy/k8s/base/deployment.yaml. Usage: node bench/idle-rss.ts [idle seconds, default 30] [-- node flags]
 * (FERRY_BENCH_FROM=src: from the TypeScript sources; default dist/, run `npm run build`;
 * other FERRY_* variables of its environment are passed to ferry)
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { brokerPorts, freePort, startBroker } from '../tools/kafka/broker.ts';
import { BENCH_API_KEY } from './bench-context.ts';
import { answers200, BenchChild } from './child-process.ts';
import { ferryEntryArgs, ferryEntryEnv, ferryEntryKind } from './ferry-entry.ts';

const MIB = 1024 * 1024;

/** nodejs_heap_size_used_bytes from ferry's /metrics (prom-client's default metrics). */
async function heapUsed(url: string): Promise<number | undefined> {
  const text = await (await fetch(url)).text();
  const match = /^nodejs_heap_size_used_bytes\s+(\S+)/m.exec(text);
  return match?.[1] ? Number(match[1]) : undefined;
}
const root = resolve(import.meta.dirname, '..');
const separator = process.argv.indexOf('--');
const extraFlags = separator < 0 ? [] : process.argv.slice(separator + 1);
/** Extra flags go last before the script, so that they win over the entry's own. */
const withFlags = (args: string[], flags: string[]) => [
  ...args.slice(0, -1),
  ...flags,
  ...args.slice(-1),
];
const idleSeconds = Number((separator === 2 ? undefined : process.argv[2]) ?? 30);
const dir = await mkdtemp(join(tmpdir(), 'ferry-idle-rss-'));
const broker = await startBroker({
  dir,
  ...(await brokerPorts()),
});
const passedThrough = Object.fromEntries(
  Object.entries(process.env).filter(
    (entry): entry is [string, string] =>
      entry[0].startsWith('FERRY_') &&
      !entry[0].startsWith('FERRY_BENCH_') &&
      entry[1] !== undefined,
  ),
);
const children: BenchChild[] = [];
try {
  const emulatorPort = await freePort();
  const emulator = new BenchChild({
    name: 'emulator',
    cwd: root,
    args: ['src/emulator/main.ts'],
    logFile: join(dir, 'emulator.log'),
    env: {
      EMULATOR_API_KEY: BENCH_API_KEY,
      EMULATOR_HOST: '127.0.0.1',
      EMULATOR_PORT: String(emulatorPort),
    },
  });
  children.push(emulator);
  const opsPort = await freePort();
  const ferry = new BenchChild({
    name: 'ferry',
    cwd: root,
    // As the container runs it (dist/, production flags) unless FERRY_BENCH_FROM=src;
    // extra node flags (e.g. V8 heap sizes) to compare come after `--`.
    args: withFlags(ferryEntryArgs(root, ferryEntryKind(process.env.FERRY_BENCH_FROM)), extraFlags),
    logFile: join(dir, 'ferry.log'),
    env: {
      FERRY_KAFKA_BROKERS: broker.brokers,
      FERRY_API_KEY: BENCH_API_KEY,
      FERRY_SYNC_BASE_URL: `http://127.0.0.1:${emulatorPort}`,
      FERRY_HTTP_HOST: '127.0.0.1',
      FERRY_HTTP_PORT: String(await freePort()),
      FERRY_OPS_HOST: '127.0.0.1',
      FERRY_OPS_PORT: String(opsPort),
      FERRY_GRPC_HOST: '127.0.0.1',
      FERRY_GRPC_PORT: String(await freePort()),
      FERRY_ADMIN_LOOPBACK_ONLY: 'true',
      ...ferryEntryEnv(root, ferryEntryKind(process.env.FERRY_BENCH_FROM)),
      // A configuration to measure at rest (e.g. FERRY_TOPIC_COMMANDS_URGENT: the urgent
      // lane's thread), from this command's environment.
      ...passedThrough,
    },
  });
  children.push(ferry);
  await ferry.waitUntil('ready', () => answers200(`http://127.0.0.1:${opsPort}/readyz`), 90_000);
  const ready = ferry.usage();
  await sleep(idleSeconds * 1000);
  const idle = ferry.usage();
  const mib = (bytes: number | undefined) => ((bytes ?? Number.NaN) / MIB).toFixed(0);
  console.log(
    `ferry idle: RSS ${mib(ready?.rssBytes)} MiB when ready, ${mib(idle?.rssBytes)} MiB after ` +
      `${idleSeconds} s idle (peak ${mib(idle?.peakRssBytes)} MiB), CPU ` +
      `${(((idle?.cpuSeconds ?? 0) - (ready?.cpuSeconds ?? 0)) * 1000).toFixed(0)} ms over the idle time, ` +
      `main thread woken ${(((idle?.mainThreadWaits ?? 0) - (ready?.mainThreadWaits ?? 0)) / idleSeconds).toFixed(0)} times/s, ` +
      `V8 heap used ${mib(await heapUsed(`http://127.0.0.1:${opsPort}/metrics`))} MiB`,
  );
} finally {
  for (const child of children.reverse()) await child.stop(10_000);
  await broker.stop();
  await rm(dir, { recursive: true, force: true });
}
