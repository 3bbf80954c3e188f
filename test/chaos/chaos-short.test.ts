/**
 * The CI form of the chaos suite (the full run is `make chaos`): 2,000
 * commands, one kill -9, one broker restart, one replica added, the emulator's
 * faults, and the short bad-input set, on its own broker. It must end with one
 * result per command and no id accepted twice by the gateway.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { fullRunDefaults, shortBadInput } from './chaos-options.ts';
import { runChaos } from './run-chaos.ts';

test('chaos (short): kill -9, a broker restart and a rebalance under gateway faults lose nothing and send nothing twice', {
  timeout: 240_000,
}, async (t) => {
  const seed = Number(process.env.CHAOS_SEED ?? Math.floor(Math.random() * 2 ** 31));
  const lines: string[] = [];
  const report = await runChaos({
    ...fullRunDefaults,
    commands: 2_000,
    kills: 1,
    brokerRestarts: 1,
    addReplica: true,
    produceWindowMs: 20_000,
    drainTimeoutMs: 90_000,
    badInput: shortBadInput,
    // One oversize try is enough to show the broker refuses it; 10 MB is not needed here.
    oversizeBytes: 2 * 1024 * 1024,
    brokerHeapMb: 384,
    // Final status tracking is checked by make chaos; make test keeps this run's time.
    statusTracking: false,
    // Copies right after the drain, not minutes later (make chaos waits for those).
    lateCopies: 50,
    lateCopiesAfterMs: 0,
    seed,
    log: (line) => lines.push(line),
  });
  t.diagnostic(`seed ${seed}: ${JSON.stringify(report.figures)}`);
  assert.deepEqual(
    report.violations,
    [],
    `${lines.join('\n')}\nlogs: ${report.logsKeptIn ?? 'none'}`,
  );
  assert.equal(
    report.figures.resultsCommitted,
    report.figures.commandsProduced +
      report.figures.badInputRecords +
      (report.figures.lateCopies?.written ?? 0),
  );
  assert.ok((report.figures.lateCopies?.written ?? 0) > 0, 'some commands were written again late');
  assert.equal(report.figures.idsSentMoreThanOnce, 0);
  assert.ok(
    report.figures.reconcilableSendIds > 1_500,
    'most commands were sends the gateway could be asked about',
  );
});
