/**
 * Warms the bench's own broker up before anything is measured. A fresh JVM runs Kafka's
 * request paths interpreted, then compiled by C1, then by C2; on two cores the compiler
 * threads compete with everything else for minutes. Measured on 2026-11-28: the same paced
 * run of 200 commands/s cost the broker 25 s of CPU on its first try and 12 s on its fifth,
 * its commit stage p50 64 ms and then 7 ms, whichever subject ran, so the subject that went
 * first in each scenario (ferry, in `make bench`) paid for the broker's compilation.
 *
 * Rounds of transactional traffic (bench/transaction-ceilings.ts: records, offsets, commits,
 * a read_committed reader) run until the broker's JIT compiler threads go quiet: a round in
 * which they used at most `quietShare` of the round's wall time, or `maxSeconds` in all.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { parseStat } from './proc-stats.ts';
import { measureTransactionCeilings } from './transaction-ceilings.ts';

/** CPU seconds so far of the process's JIT compiler threads ("C1 CompilerThre…", "C2 …"). */
export function compilerCpuSeconds(pid: number): number {
  let seconds = 0;
  let tasks: string[];
  try {
    tasks = readdirSync(`/proc/${pid}/task`);
  } catch {
    return Number.NaN;
  }
  for (const task of tasks) {
    try {
      const { name, cpuSeconds } = parseStat(
        readFileSync(`/proc/${pid}/task/${task}/stat`, 'utf8'),
      );
      if (/^C[12] Compiler/.test(name)) seconds += cpuSeconds;
    } catch {
      // A thread that ended since the listing.
    }
  }
  return seconds;
}

export interface BrokerWarmupOptions {
  readonly brokers: string;
  readonly brokerPid: number;
  readonly prefix: string;
  /** Done once a round's compiler CPU is at most this share of its wall time [0.05]. */
  readonly quietShare?: number;
  readonly maxSeconds?: number;
}

export async function warmUpBroker(
  options: BrokerWarmupOptions,
  log: (line: string) => void,
): Promise<void> {
  const quietShare = options.quietShare ?? 0.05;
  const maxSeconds = options.maxSeconds ?? 240;
  const started = performance.now();
  for (let round = 1; ; round += 1) {
    const compilerBefore = compilerCpuSeconds(options.brokerPid);
    const roundStarted = performance.now();
    let outcome: string;
    try {
      const rows = await measureTransactionCeilings({
        brokers: options.brokers,
        prefix: `${options.prefix}.${round}`,
        ids: 6,
        transactionsPerId: 60,
        recordsPerTransaction: 10,
      });
      const own = rows.find((row) => row.client === 'ferry' && row.placement === 'own');
      outcome = `${Math.round(own?.transactionsPerSecond ?? 0)} txn/s (ferry, own partition)`;
    } catch (error: unknown) {
      // A fresh broker's group coordinator may still be loading (plain kafkajs does not
      // wait for it): the round warmed the broker all the same.
      outcome = `failed (${error instanceof Error ? error.message : String(error)})`;
    }
    const seconds = (performance.now() - roundStarted) / 1000;
    const compiler = compilerCpuSeconds(options.brokerPid) - compilerBefore;
    log(
      `# broker warm-up round ${round}: ${seconds.toFixed(1)} s, ${outcome}, JIT compiler CPU ${compiler.toFixed(1)} s`,
    );
    if (!(compiler > quietShare * seconds)) return;
    if ((performance.now() - started) / 1000 >= maxSeconds) {
      log(`# broker warm-up: compiler still busy after ${maxSeconds} s; measuring anyway`);
      return;
    }
  }
}
