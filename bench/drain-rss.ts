/**
 * ferry's memory under load: starts a temporary broker, the gateway emulator and ferry
 * (compiled, as the container runs it, unless FERRY_BENCH_FROM=src), then either drains
 * a backlog produced before ferry starts (default) or feeds commands at a fixed rate
 * while it runs, sampling ferry's RSS every 100 ms and its V8 heap every second.
 * Prints the peak RSS (VmHWM), the heap, the drain rate and, with --snapshot, the
 * largest constructors of a heap snapshot taken after the drain (which collects garbage
 * first), to show what outlives the commands.
 *
 * Usage: node bench/drain-rss.ts [--commands=N] [--rate=R] [--latency=MS] [--partitions=P]
 *        [--value-bytes=B] [--snapshot] [-- FERRY_X=value ... node:--flag ...]
 * (R = 0, the default, is the backlog drain; B pads every command record's value to B
 * bytes with an extra field, which makes it invalid: a worst case of large records, each
 * also copied to the dead-letter topic; `node:` arguments are extra node flags)
 */
import { readdirSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { brokerPorts, freePort, startBroker } from '../tools/kafka/broker.ts';
import { connectAdmin, createTopicsAndWait, EmulatorChild } from './bench-context.ts';
import { answers200, BenchChild } from './child-process.ts';
import { benchCommands } from './command-mix.ts';
import { ferryEntryArgs, ferryEntryEnv, ferryEntryKind } from './ferry-entry.ts';
import { summariseSnapshot } from './heap-snapshot-summary.ts';
import { LoadGenerator } from './load-generator.ts';
import { ResultCollector } from './result-collector.ts';

const MIB = 1024 * 1024;
const root = resolve(import.meta.dirname, '..');
const separator = process.argv.indexOf('--');
const own = separator < 0 ? process.argv.slice(2) : process.argv.slice(2, separator);
const passed = separator < 0 ? [] : process.argv.slice(separator + 1);
const option = (name: string, fallback: number) => {
  const found = own.find((arg) => arg.startsWith(`--${name}=`));
  return found ? Number(found.slice(name.length + 3)) : fallback;
};
const commandCount = option('commands', 100_000);
const rate = option('rate', 0);
const latencyMs = option('latency', 0);
const partitions = option('partitions', 16);
const valueBytes = option('value-bytes', 0);
const snapshot = own.includes('--snapshot');
const nodeFlags = passed.filter((arg) => arg.startsWith('node:')).map((arg) => arg.slice(5));
const ferryEnv = Object.fromEntries(
  passed.filter((arg) => !arg.startsWith('node:')).map((arg) => arg.split(/=(.*)/s, 2)),
);

const dir = await mkdtemp(join(tmpdir(), 'ferry-drain-rss-'));
const broker = await startBroker({
  dir,
  ...(await brokerPorts()),
  heapMb: 1024,
});
const admin = await connectAdmin(broker.brokers);
// Large records go one per produce request: the broker refuses requests over ~1 MB.
const generator = new LoadGenerator({
  brokers: [broker.brokers],
  ...(valueBytes > 0 ? { chunkSize: 1 } : {}),
});
const children: BenchChild[] = [];
let collector: ResultCollector | undefined;
const mib = (bytes: number | undefined) => ((bytes ?? Number.NaN) / MIB).toFixed(0);
try {
  await generator.start();
  const context = { root, logsDir: dir } as Parameters<typeof EmulatorChild.start>[0];
  const emulator = await EmulatorChild.start(context, latencyMs);
  children.push(emulator.child);
  // The control topic is ferry's to create (one partition).
  const topics = ['commands', 'results', 'status', 'dlq'].map((t) => `drain.${t}`);
  await createTopicsAndWait(
    admin,
    broker.brokers,
    topics.map((topic) => ({ topic, numPartitions: partitions, replicationFactor: 1 })),
  );
  collector = new ResultCollector({
    brokers: [broker.brokers],
    topic: 'drain.results',
    groupId: 'drain.collector',
  });
  await collector.start();
  const commands = benchCommands(0, commandCount).map((c) =>
    c.value.length >= valueBytes || !c.value.endsWith('}')
      ? c
      : {
          ...c,
          value: `${c.value.slice(0, -1)},"pad":"${'x'.repeat(valueBytes - c.value.length - 10)}"}`,
        },
  );
  const run = collector.track(commands);
  if (rate === 0) await generator.burst('drain.commands', commands, (c, t) => run.sent(c, t));
  const opsPort = await freePort();
  const entryKind = ferryEntryKind(process.env.FERRY_BENCH_FROM);
  const entry = ferryEntryArgs(root, entryKind);
  const ferry = new BenchChild({
    name: 'ferry',
    cwd: root,
    args: [
      ...entry.slice(0, -1),
      ...nodeFlags,
      `--diagnostic-dir=${dir}`,
      '--heapsnapshot-signal=SIGUSR2',
      ...entry.slice(-1),
    ],
    logFile: join(dir, 'ferry.log'),
    env: {
      FERRY_KAFKA_BROKERS: broker.brokers,
      FERRY_KAFKA_GROUP: 'drain.group',
      FERRY_TOPIC_COMMANDS: 'drain.commands',
      FERRY_TOPIC_RESULTS: 'drain.results',
      FERRY_TOPIC_STATUS: 'drain.status',
      FERRY_TOPIC_DLQ: 'drain.dlq',
      FERRY_TOPIC_CONTROL: 'drain.control',
      FERRY_TOPIC_DEDUPE: 'drain.dedupe',
      FERRY_API_KEY: 'bench-api-key-0123456789',
      FERRY_SYNC_BASE_URL: emulator.url,
      FERRY_HTTP_HOST: '127.0.0.1',
      FERRY_HTTP_PORT: String(await freePort()),
      FERRY_OPS_HOST: '127.0.0.1',
      FERRY_OPS_PORT: String(opsPort),
      FERRY_GRPC_HOST: '127.0.0.1',
      FERRY_GRPC_PORT: String(await freePort()),
      FERRY_ADMIN_LOOPBACK_ONLY: 'true',
      ...ferryEntryEnv(root, entryKind),
      ...ferryEnv,
    },
  });
  children.push(ferry);
  const metrics = `http://127.0.0.1:${opsPort}/metrics`;
  await ferry.waitUntil('ready', () => answers200(`http://127.0.0.1:${opsPort}/readyz`), 90_000);
  const ready = ferry.usage();
  const readyHeap = await heapUsed(metrics);
  const startedAt = Date.now();
  let sampling = true;
  let peakHeap = 0;
  let peakRssSeen = 0;
  const sampler = (async () => {
    let tick = 0;
    while (sampling) {
      peakRssSeen = Math.max(peakRssSeen, ferry.usage()?.rssBytes ?? 0);
      if (tick++ % 10 === 0) peakHeap = Math.max(peakHeap, (await heapUsed(metrics)) ?? 0);
      await sleep(100);
    }
  })();
  if (rate > 0) {
    await generator.paced('drain.commands', commands, rate, (c, t) => run.sent(c, t));
  }
  const results = await run.until(Date.now() + 600_000);
  const seconds = (Date.now() - startedAt) / 1000;
  sampling = false;
  await sampler;
  const done = ferry.usage();
  console.log(
    `ferry ${rate === 0 ? `draining a backlog of ${commandCount}` : `fed ${commandCount} at ${rate}/s`} ` +
      `(${partitions} partitions, gateway ${latencyMs} ms${passed.length ? `, ${passed.join(' ')}` : ''}): ` +
      `${results.completed}/${results.expected} results in ${seconds.toFixed(1)} s ` +
      `(${(results.completed / seconds).toFixed(0)}/s); RSS ${mib(ready?.rssBytes)} MiB ready, ` +
      `peak ${mib(done?.peakRssBytes)} MiB (sampled ${mib(peakRssSeen)}), ${mib(done?.rssBytes)} MiB after; ` +
      `V8 heap used ${mib(readyHeap)} MiB ready, peak ${mib(peakHeap)} MiB (1 s samples)`,
  );
  if (snapshot) {
    await sleep(2000);
    process.kill(ferry.pid, 'SIGUSR2');
    const deadline = Date.now() + 60_000;
    let file: string | undefined;
    while (!file && Date.now() < deadline) {
      await sleep(500);
      file = readdirSync(dir).find((name) => name.endsWith('.heapsnapshot'));
      if (file) await sleep(3000);
    }
    const after = await heapUsed(metrics);
    console.log(`V8 heap used after the snapshot's full GC: ${mib(after)} MiB`);
    if (file) console.log(summariseSnapshot(join(dir, file), 15));
  }
} finally {
  for (const child of children.reverse()) await child.stop(15_000);
  await collector?.stop();
  await generator.stop();
  await admin.disconnect();
  await broker.stop();
  await rm(dir, { recursive: true, force: true });
}

/** nodejs_heap_size_used_bytes from ferry's /metrics (prom-client's default metrics). */
async function heapUsed(url: string): Promise<number | undefined> {
  try {
    const text = await (await fetch(url)).text();
    const match = /^nodejs_heap_size_used_bytes\s+(\S+)/m.exec(text);
    return match?.[1] ? Number(match[1]) : undefined;
  } catch {
    return undefined;
  }
}
