/**
 * The simulator's fixed budget in `make test`: 5,000 seeds of random plans (faults in
 * most of them) and every named scenario, each run in a child process of its own (the
 * simulator replaces the global clock). A failing seed prints the command that replays it.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';

const SEEDS = 5_000;
const CHUNK = 1_250;

function simulate(args: readonly string[]): { code: number | null; output: string } {
  const run = spawnSync(
    process.execPath,
    ['--disable-warning=TimeoutNegativeWarning', 'test/sim/run.ts', ...args],
    { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 },
  );
  return { code: run.status, output: `${run.stdout}${run.stderr}` };
}

for (let from = 1; from <= SEEDS; from += CHUNK) {
  test(`simulated seeds ${from}–${from + CHUNK - 1}: one result per command, no id sent twice, every partition finished`, () => {
    const { code, output } = simulate([`--seeds=${CHUNK}`, `--from=${from}`]);
    console.log(output.trim().split('\n').slice(-12).join('\n'));
    assert.equal(code, 0, output.slice(-4_000));
    assert.match(output, new RegExp(`sim: ${CHUNK} seeds from ${from}, 0 failed`));
  });
}

test('every named scenario (the races docs/chaos.md records) over 20 seeds', () => {
  const { code, output } = simulate(['--scenarios']);
  console.log(output.trim());
  assert.equal(code, 0, output.slice(-4_000));
});
