/**
 * `make bench`: end-to-end throughput, latency and memory of ferry, side by side
 * with an established bridge (Redpanda Connect, bench/peer/) and a plain kafkajs
 * consumer (docs/benchmarks.md), plus micro-benchmarks of the hot path.
 *
 * Starts its own Kafka broker (free ports, temporary folder, 1 GiB heap, removed
 * at the end) unless FERRY_BENCH_KAFKA_BROKERS names one; runs the emulator and
 * each system under test as separate child processes; prints a table and writes
 * `.bench/<date>-<commit>.json`. Options: see bench-options.ts and docs/benchmarks.md.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { cpus, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { brokerPorts, type RunningBroker, startBroker } from '../tools/kafka/broker.ts';
import { type BenchContext, connectAdmin, EmulatorChild } from './bench-context.ts';
import { readBenchOptions } from './bench-options.ts';
import { warmUpBroker } from './broker-warmup.ts';
import { type CeilingFigures, measureClientCeilings } from './client-ceilings.ts';
import { LoadGenerator } from './load-generator.ts';
import { busiestBetween, cpuSnapshot, formatBusiest } from './machine-cpu.ts';
import { runMicroBenchmarks } from './micro.ts';
import { formatReceipts, receiptsSettings, runReceiptsBench } from './receipts.ts';
import { type BenchReport, checkTargets, formatReport } from './report.ts';
import type { ScenarioFigures } from './scenario-figures.ts';
import { runBacklog, runPaced } from './scenarios.ts';
import { peerBinary } from './subjects.ts';
import { formatUrgentLane, runUrgentLane, type UrgentLaneFigures } from './urgent-lane.ts';

let broker: RunningBroker | undefined;
let brokerDir: string | undefined;

const root = resolve(fileURLToPath(new URL('..', import.meta.url)));
const log = (line: string) => process.stdout.write(`${line}\n`);

function gitCommit(): string {
  try {
    return execFileSync('git', ['rev-parse', '--short', 'HEAD'], {
      cwd: root,
      encoding: 'utf8',
    }).trim();
  } catch {
    return 'unknown';
  }
}

/** Builds the peer when missing or stale (tools/bench/build-redpanda-connect.sh) and returns its version. */
function ensurePeer(): string {
  execFileSync(join(root, 'tools', 'bench', 'build-redpanda-connect.sh'), [], {
    cwd: root,
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  const out = execFileSync(peerBinary(root), ['--version'], { encoding: 'utf8' });
  return /^Version:\s*(\S+)/m.exec(out)?.[1] ?? 'unknown';
}

async function main(): Promise<void> {
  const startedAt = Date.now();
  const options = readBenchOptions(process.env, process.argv.slice(2));
  const date = new Date();
  const stamp = date.toISOString().replace(/[:.]/g, '-').slice(0, 19);
  const commit = gitCommit();
  const outDir = join(root, '.bench');
  const logsDir = join(outDir, 'logs', stamp);
  const profilesDir = join(outDir, 'profiles');
  mkdirSync(logsDir, { recursive: true });
  if (options.cpuProfile) mkdirSync(profilesDir, { recursive: true });

  const peerVersion = options.subjects.includes('peer') ? ensurePeer() : 'not run';
  log(`# micro-benchmarks (${options.microRounds} rounds each)`);
  const micro = runMicroBenchmarks({ rounds: options.microRounds });

  let context: BenchContext | undefined;
  try {
    let brokers = options.brokers;
    if (!brokers) {
      brokerDir = await mkdtemp(join(tmpdir(), 'ferry-bench-kafka-'));
      const t0 = Date.now();
      broker = await startBroker({
        dir: brokerDir,
        ...(await brokerPorts()),
        heapMb: 1024,
        // Kafka's own start script's heap and G1 settings: the broker as it runs in production.
        productionJvm: true,
      });
      brokers = broker.brokers;
      log(`# kafka broker ${brokers} ready in ${Date.now() - t0} ms`);
      await warmUpBroker({ brokers, brokerPid: broker.pid, prefix: `bench.${stamp}.warmup` }, log);
    } else {
      log(`# using the broker at ${brokers}`);
    }
    const generator = new LoadGenerator({ brokers: [brokers] });
    await generator.start();
    context = {
      root,
      logsDir,
      profilesDir,
      brokers,
      brokerPid: broker?.pid,
      admin: await connectAdmin(brokers),
      generator,
      runId: `${stamp}-${process.pid}`,
      createdTopics: [],
      nextId: 1,
    };
    const scenarios: ScenarioFigures[] = [];
    let urgentLane: UrgentLaneFigures | undefined;
    for (const latencyMs of options.latenciesMs) {
      const settings = { ...options, latencyMs };
      log(
        `# gateway latency ${latencyMs} ms, ${options.partitions} partitions: ${options.subjects.join(', ')}`,
      );
      const emulator = await EmulatorChild.start(context, latencyMs);
      try {
        for (const subject of options.subjects) {
          const before = cpuSnapshot();
          scenarios.push(await runBacklog(context, emulator, settings, subject, log));
          log(`  CPU used during the run: ${formatBusiest(busiestBetween(before, cpuSnapshot()))}`);
        }
        for (const rate of options.pacedRates) {
          for (const subject of options.subjects) {
            const before = cpuSnapshot();
            scenarios.push(await runPaced(context, emulator, settings, subject, rate, log));
            log(
              `  CPU used during the run: ${formatBusiest(busiestBetween(before, cpuSnapshot()))}`,
            );
          }
        }
        // Once, at the slowest gateway: an urgent command's budget includes its latency.
        if (
          options.urgentBacklogCommands > 0 &&
          options.subjects.includes('ferry') &&
          latencyMs === Math.max(...options.latenciesMs)
        ) {
          log(`# urgent lane: ${options.urgentBacklogCommands} bulk commands waiting`);
          urgentLane = await runUrgentLane(
            context,
            emulator,
            {
              latencyMs,
              partitions: options.partitions,
              urgentPartitions: options.urgentPartitions ?? options.partitions,
              backlogCommands: options.urgentBacklogCommands,
              urgentRate: options.urgentRate,
              cpuProfile: options.cpuProfile,
              separateProcess: options.urgentSeparateProcess,
              runTimeoutSeconds: Math.max(
                options.runTimeoutSeconds,
                Math.ceil(options.urgentBacklogCommands / 5_000),
              ),
            },
            log,
          );
        }
      } finally {
        await emulator.child.stop(10_000);
      }
    }
    let ceilings: CeilingFigures | undefined;
    if (options.clientCeilings) {
      log('# client ceilings');
      ceilings = await measureClientCeilings(context, options.quick, log);
    }
    log('# receipts: status callbacks posted to ferry by 64 concurrent senders');
    const receipts = await runReceiptsBench(context, receiptsSettings(options.cpuProfile), log);
    const report: BenchReport & { receipts: typeof receipts } = {
      meta: {
        date: date.toISOString(),
        commit,
        node: process.version,
        cpus: cpus().length,
        cpuModel: cpus()[0]?.model ?? 'unknown',
        quick: options.quick,
        peerVersion,
        options: { ...options },
      },
      micro,
      scenarios,
      targets: checkTargets(scenarios),
      ...(ceilings ? { ceilings } : {}),
      ...(urgentLane ? { urgentLane } : {}),
      durationSeconds: (Date.now() - startedAt) / 1000,
      receipts,
    };
    const file = join(outDir, `${stamp}-${commit}.json`);
    writeFileSync(file, `${JSON.stringify(report, null, 2)}\n`);
    log('');
    log(formatReport(report));
    log(formatReceipts(receipts));
    if (urgentLane) log(formatUrgentLane(urgentLane));
    log(`report: ${file}`);
    log(`logs:   ${logsDir}`);
    if (options.cpuProfile)
      log(`profiles: ${profilesDir} (summarise: node bench/profile-summary.ts <file>)`);
  } finally {
    if (context) {
      await context.generator.stop().catch(() => undefined);
      // A broker that outlives the run keeps no benchmark topics behind.
      if (!broker && context.createdTopics.length > 0) {
        await context.admin.deleteTopics({ topics: context.createdTopics }).catch(() => undefined);
      }
      await context.admin.disconnect().catch(() => undefined);
    }
    if (broker) await broker.stop(15_000);
    if (brokerDir) await rm(brokerDir, { recursive: true, force: true });
  }
}

// Bounded as a whole: a stuck run must not hold the machine (the budget is 15 minutes).
const overall = setTimeout(() => {
  process.stderr.write('bench: exceeded 20 minutes; giving up\n');
  const stopping = broker ? broker.stop(5_000) : Promise.resolve();
  void stopping.finally(() => process.exit(2));
}, 20 * 60_000);
overall.unref();

try {
  await main();
  process.exit(0);
} catch (error: unknown) {
  process.stderr.write(
    `bench: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
  );
  process.exit(1);
}
