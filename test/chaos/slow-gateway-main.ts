/**
 * `make chaos`, second part: the slow-gateway scenario at full size (3,000 commands,
 * a gateway answering in 3 s, a 6 s session), once without and once with one of the
 * two replicas frozen for 12 s. Prints the figures of each run; exits 0 when every
 * check held, 1 on any violation, 2 when a run could not be carried out.
 *
 * Usage: node test/chaos/slow-gateway-main.ts [--commands=N]
 */
import { runSlowGateway } from './slow-gateway.ts';

const log = (line: string): void => {
  process.stdout.write(`# ${new Date().toISOString().slice(11, 23)} ${line}\n`);
};
const flag = process.argv.find((arg) => arg.startsWith('--commands='));
const commands = flag ? Number(flag.slice('--commands='.length)) : 3_000;
if (!Number.isSafeInteger(commands) || commands < 1) {
  process.stderr.write(`slow-gateway: --commands must be a positive integer\n`);
  process.exit(2);
}

let failed = false;
for (const freezeMs of [0, 12_000]) {
  log(`slow gateway: ${commands} commands${freezeMs ? `, replica-2 frozen ${freezeMs} ms` : ''}`);
  try {
    const report = await runSlowGateway({
      commands,
      partitions: 6,
      gatewayLatencyMs: 3_000,
      sessionTimeoutMs: 6_000,
      requestTimeoutMs: 5_000,
      concurrency: 4,
      batchMaxOps: 20,
      freezeMs,
      brokerHeapMb: 512,
      log,
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
