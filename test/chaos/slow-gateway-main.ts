/**
 * `make chaos`, second part: the slow-gateway scenario at full size (3,000 commands,
 * a gateway answering in 3 s, a 6 s session): as it is; with one of the two replicas
 * frozen for 12 s; and with a tenth of the answers coming after 8 s (past the session)
 * while one replica is stopped with SIGTERM mid-send and started again. Prints the figures of each run; exits 0 when every
 * check held, 1 on any violation, 2 when a run could not be carried out.
 *
 * Usage: node test/chaos/slow-gateway-main.ts [--commands=N]
 */
import { runSlowGateway, slowGatewaySetting } from './slow-gateway.ts';

const log = (line: string): void => {
  process.stdout.write(`# ${new Date().toISOString().slice(11, 23)} ${line}\n`);
};
const flag = process.argv.find((arg) => arg.startsWith('--commands='));
const commands = flag ? Number(flag.slice('--commands='.length)) : 3_000;
if (!Number.isSafeInteger(commands) || commands < 1) {
  process.stderr.write(`slow-gateway: --commands must be a positive integer\n`);
  process.exit(2);
}

const variants = [
  { label: '', freezeMs: 0 },
  { label: ', replica-2 frozen 12000 ms', freezeMs: 12_000 },
  {
    label: ', a tenth of answers after 8 s, SIGTERM of replica-2',
    freezeMs: 0,
    sigterm: true,
    slowAnswers: { rate: 0.1, ms: 8_000 },
  },
];

let failed = false;
for (const { label, ...variant } of variants) {
  log(`slow gateway: ${commands} commands${label}`);
  try {
    const report = await runSlowGateway({
      ...slowGatewaySetting,
      commands,
      brokerHeapMb: 512,
      log,
      ...variant,
    });
    process.stdout.write(`${JSON.stringify(report.figures, null, 2)}\n`);
    for (const violation of report.violations) log(`VIOLATION ${violation}`);
    log(report.ok ? 'PASS' : 'FAIL');
    failed ||= !report.ok;
  } catch (error: unknown) {
    process.stderr.write(
      `slow-gateway: the run failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    );
    process.exit(2);
  }
}
process.exit(failed ? 1 : 0);
