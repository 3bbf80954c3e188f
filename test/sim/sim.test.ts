/**
 * The simulator's fixed budget in `make test`: 5,000 seeds of random plans (faults in
 * most of them) and every named scenario, each run in a child process of its own (the
 * simulator replaces the global clock), then 400 seeds and the scenarios again with
 * FERRY_TRANSACTIONS=lane. A failing seed prints the command that replays it.
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

const LANE_SEEDS = 400;

test(`FERRY_TRANSACTIONS=lane: seeds 1–${LANE_SEEDS} and every named scenario`, () => {
  const seeds = simulate([`--seeds=${LANE_SEEDS}`, '--from=1', '--transactions=lane']);
  console.log(seeds.output.trim().split('\n').slice(-12).join('\n'));
  assert.equal(seeds.code, 0, seeds.output.slice(-4_000));
  assert.match(seeds.output, new RegExp(`sim: ${LANE_SEEDS} seeds from 1, 0 failed`));
  const scenarios = simulate(['--scenarios', '--transactions=lane']);
  console.log(scenarios.output.trim());
  assert.equal(scenarios.code, 0, scenarios.output.slice(-4_000));
});
