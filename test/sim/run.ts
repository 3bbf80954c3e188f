/**
 * The simulator of the exactly-once core, from the command line.
 *
 *   node test/sim/run.ts --seed=N [--log=debug]     one run, replayed exactly; its log with --log
 *   node test/sim/run.ts --seeds=5000 [--from=S]    seeds S, S+1, …; stops at the first failure unless --all
 *   node test/sim/run.ts --minutes=10 [--from=S]    as many seeds as fit (make sim)
 *   node test/sim/run.ts --scenarios                every named scenario (known races) once
 *   --no-late-fetch                                 without fetches handed over after a rejoin
 *   --transactions=lane                             the replicas with FERRY_TRANSACTIONS=lane
 *
 * A failing seed prints itself and the command that replays it. Exit code 1 on any failure.
 */

import { type LogLevel, logLevels } from '../../src/observability/logger.ts';
import { createMetrics } from '../../src/observability/metrics.ts';
import { planRun } from './plan.ts';
import { scenarios } from './scenarios.ts';
import { type RunOutcome, runPlan } from './world.ts';

const args = new Map(
  process.argv.slice(2).map((arg) => {
    const [name, value] = arg.replace(/^--/, '').split('=');
    return [name ?? '', value ?? 'true'];
  }),
);

const metrics = createMetrics();
const logLevel = (args.get('log') ?? 'silent') as LogLevel;
if (!logLevels.includes(logLevel)) throw new Error(`--log must be one of ${logLevels.join(', ')}`);

async function runSeed(seed: number, scenario?: string): Promise<RunOutcome> {
  const lines: string[] = [];
  const base = scenario ? scenarios[scenario]?.(seed) : undefined;
  if (scenario && !base) throw new Error(`no scenario ${scenario}`);
  const planned = base ?? planRun(seed);
  // --no-late-fetch: the same run without fetches handed over after a rejoin (finding 20).
  const withoutLate = args.has('no-late-fetch')
    ? { ...planned, portFaults: { ...planned.portFaults, lateFetchRate: 0 } }
    : planned;
  // --transactions=lane: the same run with one transactional producer per replica.
  const asked = args.get('transactions');
  if (asked !== undefined && asked !== 'lane' && asked !== 'partition') {
    throw new Error('--transactions must be lane or partition');
  }
  const transactions: 'lane' | 'partition' | undefined = asked;
  const plan = transactions
    ? { ...withoutLate, settings: { ...withoutLate.settings, transactions } }
    : withoutLate;
  const outcome = await runPlan(plan, { metrics, logLevel, log: (line) => lines.push(line) });
  if (logLevel !== 'silent' || args.has('plan')) {
    console.log(JSON.stringify(plan));
    for (const line of lines) console.log(line);
  }
  return outcome;
}

function replay(seed: number, scenario?: string): string {
  const named = scenario ? ` --scenario=${scenario}` : '';
  return `node test/sim/run.ts --seed=${seed}${named} --log=debug`;
}

function report(outcome: RunOutcome, scenario?: string): void {
  console.log(
    `sim: FAIL seed ${outcome.seed}${scenario ? ` (scenario ${scenario})` : ''}: ${outcome.violations.length} violations`,
  );
  for (const violation of outcome.violations.slice(0, 20)) console.log(`  - ${violation}`);
  console.log(`  replay: ${replay(outcome.seed, scenario)}`);
}

async function main(): Promise<number> {
  const scenario = args.get('scenario');
  if (args.has('seed')) {
    const outcome = await runSeed(Number(args.get('seed')), scenario);
    console.log(JSON.stringify(outcome));
    if (outcome.violations.length > 0) report(outcome, scenario);
    return outcome.violations.length > 0 ? 1 : 0;
  }
  if (args.has('scenarios')) {
    let failed = 0;
    for (const name of Object.keys(scenarios)) {
      const seeds = Number(args.get('per-scenario') ?? 20);
      let bad = 0;
      for (let seed = 1; seed <= seeds; seed++) {
        const outcome = await runSeed(seed, name);
        if (outcome.violations.length > 0) {
          bad += 1;
          if (bad === 1) report(outcome, name);
        }
      }
      console.log(`sim: scenario ${name}: ${seeds - bad}/${seeds} seeds clean`);
      if (bad > 0) failed += 1;
    }
    return failed > 0 ? 1 : 0;
  }
  // --from=random: a search of seeds nobody ran before (make sim).
  const from =
    args.get('from') === 'random'
      ? 10_000 + Math.floor(Math.random() * 1_000_000_000)
      : Number(args.get('from') ?? 1);
  const count = Number(args.get('seeds') ?? Number.POSITIVE_INFINITY);
  const deadline = args.has('minutes')
    ? Date.now() + Number(args.get('minutes')) * 60_000
    : Number.POSITIVE_INFINITY;
  const all = args.has('all');
  const started = Date.now();
  let runs = 0;
  let failures = 0;
  let virtualMs = 0;
  for (let seed = from; runs < count && Date.now() < deadline; seed++) {
    const outcome = await runSeed(seed, scenario);
    runs += 1;
    virtualMs += outcome.finishedAtMs ?? 0;
    if (outcome.violations.length > 0) {
      failures += 1;
      report(outcome, scenario);
      if (!all) break;
    }
  }
  const seconds = (Date.now() - started) / 1000;
  console.log(
    `sim: ${runs} seeds from ${from}, ${failures} failed, ${seconds.toFixed(1)} s (${(runs / seconds).toFixed(1)} seeds/s, ${(virtualMs / 1000 / 60).toFixed(0)} virtual min)`,
  );
  return failures > 0 ? 1 : 0;
}

process.exitCode = await main();
