/**
 * `make chaos`: one full chaos run (docs/chaos.md). Prints the figures
 * and exits 0 when every check held, 1 on any violation, 2 when the run could not
 * be carried out or passed its hard time limit. Everything it started is stopped.
 *
 * Usage: node test/chaos/chaos.ts [--commands=N] [--kills=N] [--seed=N] … (--help)
 */
import { optionHelp, parseChaosOptions } from './chaos-options.ts';
import { type ChaosReport, runChaos } from './run-chaos.ts';

const log = (line: string): void => {
  process.stdout.write(`# ${new Date().toISOString().slice(11, 23)} ${line}\n`);
};

if (process.argv.includes('--help')) {
  process.stdout.write(
    `usage: node --disable-warning=TimeoutNegativeWarning test/chaos/chaos.ts [options]\n${optionHelp}\n`,
  );
  process.exit(0);
}

let parsed: ReturnType<typeof parseChaosOptions>;
try {
  parsed = parseChaosOptions(process.argv.slice(2), process.env, log);
} catch (error: unknown) {
  process.stderr.write(`chaos: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(2);
}
const { options, overallTimeoutMs } = parsed;
log(
  `chaos run: ${options.commands} commands, ${options.kills} kills, ${options.brokerRestarts} broker restarts, seed ${options.seed}`,
);

// Past the hard limit, or on Ctrl-C, the run is aborted at its next wait and cleans up;
// if clean-up itself hangs, the process ends anyway (its exit hook kills the children).
const controller = new AbortController();
const abort = (why: string): void => {
  if (controller.signal.aborted) return;
  process.stderr.write(`chaos: ${why}; aborting and cleaning up\n`);
  controller.abort(new Error(why));
  setTimeout(() => process.exit(2), 60_000).unref();
};
setTimeout(
  () => abort(`passed the hard limit of ${overallTimeoutMs} ms`),
  overallTimeoutMs,
).unref();
process.once('SIGINT', () => abort('interrupted'));
process.once('SIGTERM', () => abort('terminated'));

let report: ChaosReport;
try {
  report = await runChaos({ ...options, signal: controller.signal });
} catch (error: unknown) {
  process.stderr.write(
    `chaos: the run failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
  );
  process.exit(2);
}
if (controller.signal.aborted) process.exit(2);
process.stdout.write(`\n${JSON.stringify(report.figures, null, 2)}\n`);
if (report.ok) {
  process.stdout.write('chaos: PASS\n');
  process.exit(0);
}
process.stdout.write(`chaos: FAIL\n${report.violations.map((v) => `  - ${v}`).join('\n')}\n`);
if (report.logsKeptIn) process.stdout.write(`logs kept in ${report.logsKeptIn}\n`);
process.exit(1);
