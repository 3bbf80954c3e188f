/**
 * A bounded loop of small chaos runs aimed at one moment: the broker restarting while
 * replicas are still starting and committing their first batches, and a replica joining
 * around the restart (a rebalance that leaves some partitions where they are). That is
 * when a replica takes a partition over right after committing it itself, while the
 * transaction coordinator has not yet written that commit's markers (they are written
 * again only once the restarted broker has loaded its transaction log), so the group
 * offset still reads as it was before the commit.
 *
 * One replica starts; a second is added at a random point 3–7 s into the run (the
 * first one has been committing for a while by then) and the broker restarts 0–1.5 s
 * later, so the second one's join lands when the broker is back and the group
 * rebalances while the first one's last transactions may still be completing.
 *
 * Each run has its own broker; it stops starting runs past the time budget.
 * Exit 0 when every run held exactly-once, 1 when one did not, 2 on a set-up failure.
 *
 * Usage: node --disable-warning=TimeoutNegativeWarning test/chaos/startup-restart-loop.ts
 *   [--runs=10] [--budget-ms=1200000] [--commands=400] [--window-ms=10000] [--seed=N]
 * RESTART_LOOP_LOG_LEVEL=trace logs every Kafka request of the replicas (default debug).
 */
import { fullRunDefaults, shortBadInput } from './chaos-options.ts';
import { runChaos } from './run-chaos.ts';
import { createSeededRandom } from './seeded-random.ts';

function flag(name: string, fallback: number): number {
  const raw = process.argv.find((arg) => arg.startsWith(`--${name}=`))?.split('=')[1];
  const value = raw === undefined ? fallback : Number(raw);
  if (!Number.isSafeInteger(value) || value < 0) throw new Error(`--${name}: not an integer`);
  return value;
}

const runs = flag('runs', 10);
const budgetMs = flag('budget-ms', 20 * 60_000);
const commands = flag('commands', 400);
const windowMs = flag('window-ms', 10_000);
const firstSeed = flag('seed', Math.floor(Math.random() * 2 ** 31));
const log = (line: string): void => {
  process.stdout.write(`# ${new Date().toISOString().slice(11, 23)} ${line}\n`);
};

const started = Date.now();
const failures: string[] = [];
let done = 0;
for (let run = 0; run < runs && Date.now() - started < budgetMs; run += 1) {
  const seed = (firstSeed + run) % 2 ** 31;
  const random = createSeededRandom(seed);
  const addAtMs = random.int(3_000, 7_000);
  const restartAtMs = addAtMs + random.int(0, 1_500);
  const report = await runChaos({
    ...fullRunDefaults,
    commands,
    replicas: 1,
    faultPlan: [
      { kind: 'add', atMs: addAtMs },
      { kind: 'broker', atMs: restartAtMs },
    ],
    produceWindowMs: windowMs,
    badInput: shortBadInput,
    compressedPerCodec: 0,
    oversizeBytes: 0,
    // Late copies are the fault run's check; here they would only add minutes.
    lateCopies: 0,
    drainTimeoutMs: 90_000,
    brokerHeapMb: 384,
    // A session longer than the outage (a restart takes 2-15 s here): the members keep
    // their ids through it, so the rebalance after it leaves partitions with the replica
    // that committed them, producers and all.
    ferryEnv: {
      // trace adds every Kafka request and answer, for a failure that has to be read closely.
      FERRY_LOG_LEVEL: process.env.RESTART_LOOP_LOG_LEVEL ?? 'debug',
      FERRY_KAFKA_SESSION_TIMEOUT_MS: '20000',
    },
    seed,
    log: () => undefined,
  }).catch((error: unknown) => {
    log(`run ${run + 1} seed ${seed}: could not be carried out: ${String(error)}`);
    return undefined;
  });
  if (!report) {
    process.exitCode = 2;
    continue;
  }
  done += 1;
  const f = report.figures;
  log(
    `run ${run + 1} seed ${seed}: ${report.ok ? 'pass' : 'FAIL'}; results ${f.resultsCommitted}, input written twice ${f.commandsWrittenTwice}, duplicates ${f.resultDuplicates}, missing ${f.resultsMissing}, ids sent twice ${f.idsSentMoreThanOnce}, reconciled ${f.reconciled}; ${f.faults.join('; ')}`,
  );
  if (!report.ok) {
    failures.push(`seed ${seed}: ${report.violations.join(' | ')} (logs: ${report.logsKeptIn})`);
  }
}
log(`${done} runs in ${Math.round((Date.now() - started) / 1000)} s, ${failures.length} failed`);
for (const failure of failures) log(`  ${failure}`);
if (failures.length > 0) process.exitCode = 1;
