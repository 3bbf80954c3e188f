/**
 * `make chaos`, the cluster run (docs/chaos.md): ferry on three KRaft nodes while
 * the leaders of its topics and its group coordinator are killed with SIGKILL.
 * Prints the figures; exits 0 when every check held, 1 on any violation, 2 when the
 * run could not be carried out or passed its hard time limit.
 *
 * Usage: node test/chaos/cluster-main.ts [--commands=N] [--kills=N] [--window-ms=N]
 *   [--restart-after-ms=N] [--seed=N] [--timeout-ms=N]
 */
import { tmpdir } from 'node:os';
import { type ClusterChaosOptions, runClusterChaos } from './cluster-chaos.ts';

const log = (line: string): void => {
  process.stdout.write(`# ${new Date().toISOString().slice(11, 23)} ${line}\n`);
};

const defaults = {
  commands: 4_000,
  kills: 3,
  'window-ms': 60_000,
  'restart-after-ms': 15_000,
  seed: Math.floor(Math.random() * 2 ** 31),
  'timeout-ms': 6 * 60_000,
};
type Flag = keyof typeof defaults;
const values = { ...defaults };
for (const arg of process.argv.slice(2)) {
  const match = /^--([a-z-]+)=(\d+)$/.exec(arg);
  const name = match?.[1] as Flag | undefined;
  if (!match || name === undefined || !(name in defaults)) {
    process.stderr.write(
      `cluster chaos: unknown argument "${arg}"; flags: ${Object.keys(defaults)
        .map((f) => `--${f}=N`)
        .join(' ')}\n`,
    );
    process.exit(2);
  }
  values[name] = Number(match[2]);
}

const controller = new AbortController();
const abort = (why: string): void => {
  if (controller.signal.aborted) return;
  process.stderr.write(`cluster chaos: ${why}; aborting and cleaning up\n`);
  controller.abort(new Error(why));
  setTimeout(() => process.exit(2), 60_000).unref();
};
setTimeout(
  () => abort(`passed the hard limit of ${values['timeout-ms']} ms`),
  values['timeout-ms'],
).unref();
process.once('SIGINT', () => abort('interrupted'));
process.once('SIGTERM', () => abort('terminated'));

const options: ClusterChaosOptions = {
  commands: values.commands,
  partitions: 6,
  replicas: 2,
  kills: values.kills,
  produceWindowMs: values['window-ms'],
  restartAfterMs: values['restart-after-ms'],
  drainTimeoutMs: 120_000,
  nodeHeapMb: 384,
  seed: values.seed,
  keepLogsDir: tmpdir(),
  log,
  signal: controller.signal,
};
log(
  `cluster chaos run: 3 nodes, ${options.commands} commands over ${options.produceWindowMs} ms, ${options.kills} leader kills, seed ${options.seed}`,
);
try {
  const report = await runClusterChaos(options);
  if (controller.signal.aborted) process.exit(2);
  process.stdout.write(`\n${JSON.stringify(report.figures, null, 2)}\n`);
  if (report.ok) {
    process.stdout.write('cluster chaos: PASS\n');
    process.exit(0);
  }
  process.stdout.write(
    `cluster chaos: FAIL\n${report.violations.map((v) => `  - ${v}`).join('\n')}\n`,
  );
  if (report.logsKeptIn) process.stdout.write(`logs kept in ${report.logsKeptIn}\n`);
  process.exit(1);
} catch (error: unknown) {
  process.stderr.write(
    `cluster chaos: the run failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
  );
  process.exit(2);
}
