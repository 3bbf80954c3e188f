/**
 * What a rolling deploy costs the commands flowing through it. Two ferry replicas share a
 * group while commands arrive at a steady rate; a third joins (partitions move from live
 * replicas to it), then one of the first two is stopped with SIGTERM (its partitions move
 * to the others). Each phase's commands are timed apart, produce until the result is
 * readable at read_committed, and the gateway's `status` lookups (a new owner asking what
 * an earlier one may have sent) are counted per phase. A moved partition whose earlier
 * owner left a send intent behind waits out that owner's sends (request timeout + 2 s,
 * 12 s by default) and looks its range up: that shows as the phase's max and lookups.
 *
 * `node bench/rolling-deploy.ts <broker> [rate=200] [latencyMs=0] [phaseSeconds=12] [partitions=6]`
 * With FERRY_BENCH_BEFORE set (an earlier checkout, built), the same run follows with that
 * build, for a before/after in one sitting.
 */
import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  type BenchContext,
  connectAdmin,
  createTopics,
  EmulatorChild,
  startCollector,
  subjectStartOf,
  takeCommands,
} from './bench-context.ts';
import { LoadGenerator } from './load-generator.ts';
import type { RunTracker } from './result-collector.ts';
import { type StartedSubject, startSubject, subjectTopics } from './subjects.ts';

const [broker = '127.0.0.1:9092', ...rest] = process.argv.slice(2);
const [rate = 200, latencyMs = 0, phaseSeconds = 12, partitions = 6] = rest.map(Number);
/** Long enough after the last produce for a moved partition's wait (12 s by default) to end. */
const DRAIN_MS = 25_000;

const root = resolve(fileURLToPath(new URL('..', import.meta.url)));
const log = (line: string) => process.stdout.write(`${line}\n`);

interface Phase {
  readonly name: string;
  readonly tracker: RunTracker;
  lookupsBefore: number;
  lookups: number;
}

async function statusLookups(emulator: EmulatorChild): Promise<number> {
  const response = await fetch(`${emulator.url}/__emulator/stats?sendsById=0`);
  const stats = (await response.json()) as {
    statusLookupsById: Record<string, number>;
  };
  return Object.values(stats.statusLookupsById).reduce((sum, n) => sum + n, 0);
}

async function duplicateSends(emulator: EmulatorChild): Promise<number> {
  const response = await fetch(`${emulator.url}/__emulator/stats?sendsById=0`);
  return ((await response.json()) as { duplicates: string[] }).duplicates.length;
}

async function oneRun(context: BenchContext, build: 'ferry' | 'ferry-before'): Promise<void> {
  const emulator = await EmulatorChild.start(context, latencyMs);
  const base = `bench.${context.runId}.rolling.${build}`;
  const topics = subjectTopics(base);
  await createTopics(
    context,
    [topics.commands, topics.results, topics.status, topics.dlq],
    partitions,
  );
  const collector = await startCollector(context, topics.results, `${base}.collector`);
  const replicas: StartedSubject[] = [];
  const start = (name: string) =>
    startSubject(
      build,
      subjectStartOf(
        context,
        emulator,
        { base, logName: `${build}-rolling-${name}`, topics },
        partitions,
      ),
    );
  try {
    for (const name of ['a', 'b']) replicas.push(await start(name));
    await Promise.all(replicas.map((replica) => replica.ready(90_000)));
    const phases: Phase[] = [];
    const produce = async (name: string, during?: () => Promise<unknown>) => {
      const commands = takeCommands(context, Math.round(rate * phaseSeconds));
      const phase: Phase = {
        name,
        tracker: phases.length === 0 ? collector.track(commands) : collector.trackAlso(commands),
        lookupsBefore: await statusLookups(emulator),
        lookups: 0,
      };
      phases.push(phase);
      const action = during?.();
      await context.generator.paced(topics.commands, commands, rate, (c, at) =>
        phase.tracker.sent(c, at),
      );
      await action;
    };
    await produce('steady, 2 replicas');
    await produce('a 3rd joins', async () => replicas.push(await start('c')));
    await produce('one leaves (SIGTERM)', async () => {
      await (replicas[0] as StartedSubject).child.stop(30_000);
    });
    const deadline = Date.now() + DRAIN_MS;
    for (const phase of phases) {
      const results = await phase.tracker.until(deadline);
      const next = phases[phases.indexOf(phase) + 1];
      phase.lookups =
        (next ? next.lookupsBefore : await statusLookups(emulator)) - phase.lookupsBefore;
      const v = results.visibleLatency;
      const slow = phase.tracker.visibleLatenciesMs.filter((ms) => ms > 1_000).length;
      log(
        `${build.padEnd(12)} ${phase.name.padEnd(22)} ${results.completed}/${results.expected}` +
          `  p50 ${v.p50Ms.toFixed(0)}  p99 ${v.p99Ms.toFixed(0)}  max ${v.maxMs.toFixed(0)} ms` +
          `  over 1 s: ${slow}  status lookups: ${phase.lookups}`,
      );
    }
    log(`${build.padEnd(12)} ids sent twice: ${await duplicateSends(emulator)}`);
  } finally {
    await Promise.all(replicas.map((replica) => replica.child.stop(30_000)));
    await collector.stop();
    await emulator.child.stop(10_000);
  }
}

async function main(): Promise<void> {
  const stamp = new Date().toISOString().replace(/[:.]/g, '-').slice(0, 19);
  const logsDir = join(root, '.bench', 'logs', `${stamp}-rolling`);
  mkdirSync(logsDir, { recursive: true });
  const generator = new LoadGenerator({ brokers: [broker] });
  await generator.start();
  const context: BenchContext = {
    root,
    logsDir,
    profilesDir: logsDir,
    brokers: broker,
    brokerPid: undefined,
    admin: await connectAdmin(broker),
    generator,
    runId: `${stamp}-${process.pid}`,
    createdTopics: [],
    nextId: 1,
  };
  log(
    `# rolling deploy: ${rate} commands/s, gateway ${latencyMs} ms, ${partitions} partitions, phases of ${phaseSeconds} s; logs in ${logsDir}`,
  );
  try {
    await oneRun(context, 'ferry');
    if (process.env.FERRY_BENCH_BEFORE) await oneRun(context, 'ferry-before');
  } finally {
    await context.admin.deleteTopics({ topics: context.createdTopics }).catch(() => undefined);
    await context.admin.disconnect();
    await generator.stop();
  }
}

await main();
