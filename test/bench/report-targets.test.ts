import assert from 'node:assert/strict';
import { test } from 'node:test';
import { checkTargets, formatReport } from '../../bench/report.ts';
import type { ScenarioFigures } from '../../bench/scenario-figures.ts';

const MIB = 1024 * 1024;

function figures(
  over: Partial<ScenarioFigures> & Pick<ScenarioFigures, 'subject' | 'kind'>,
): ScenarioFigures {
  const latency = { p50Ms: 20, p95Ms: 40, p99Ms: 50, maxMs: 60, count: 100 };
  return {
    latencyMs: 0,
    commands: 100,
    completed: 100,
    succeeded: 100,
    complete: true,
    commandsPerSecond: 1_000,
    producedPerSecond: 1_000,
    latency,
    recordLatency: latency,
    cpuSeconds: 1,
    cpuMsPerThousandCommands: 100,
    envelopes: 1,
    operationsPerEnvelope: 100,
    commandRecords: 100,
    duplicateResults: 0,
    duplicateSends: 0,
    peakRssBytes: 100 * MIB,
    ...over,
  } as ScenarioFigures;
}

const byName = (checks: ReturnType<typeof checkTargets>) =>
  new Map(checks.map((check) => [check.name, check.met]));

test('every target is against the peer of the same scenario in the same run', () => {
  const checks = byName(
    checkTargets([
      figures({ subject: 'ferry', kind: 'backlog', commandsPerSecond: 1_300 }),
      figures({ subject: 'peer', kind: 'backlog', commandsPerSecond: 1_000 }),
      figures({
        subject: 'ferry',
        kind: 'paced',
        ratePerSecond: 200,
        latency: { p50Ms: 36, p95Ms: 80, p99Ms: 95, maxMs: 99, count: 100 },
        cpuMsPerThousandCommands: 120,
      }),
      figures({ subject: 'peer', kind: 'paced', ratePerSecond: 200 }),
    ]),
  );
  assert.equal(checks.get('backlog ferry / redpanda-connect, 0 ms'), true, '1.30x >= 1.25x');
  assert.equal(checks.get('paced p50, 0 ms, 200/s'), false, '36 > 20 + 15');
  assert.equal(checks.get('paced p99, 0 ms, 200/s'), false, '95 > 50 + 40');
  assert.equal(checks.get('cpu per 1k commands, 0 ms, 200/s'), false, '120 > 100');
  assert.equal(checks.get('cpu per 1k commands, 0 ms, backlog'), true, '100 <= 100');
  assert.equal(checks.get('ferry peak RSS, any scenario'), true);
});

test('without a peer only the memory bound is checked; over 128 MiB it is missed', () => {
  const checks = checkTargets([
    figures({ subject: 'ferry', kind: 'backlog', peakRssBytes: 129 * MIB }),
  ]);
  assert.deepEqual(
    checks.map((check) => [check.name, check.met]),
    [['ferry peak RSS, any scenario', false]],
  );
});

test("the first seconds after ready are held to the same margins against the peer's first seconds", () => {
  const first = (p50Ms: number, p99Ms: number, completed = 600) => ({
    seconds: 3,
    commands: 600,
    completed,
    latency: { p50Ms, p95Ms: p99Ms, p99Ms, maxMs: p99Ms, count: completed },
  });
  const run = (ferryFirst: ReturnType<typeof first>) =>
    byName(
      checkTargets([
        figures({ subject: 'ferry', kind: 'paced', ratePerSecond: 200, firstSeconds: ferryFirst }),
        figures({
          subject: 'peer',
          kind: 'paced',
          ratePerSecond: 200,
          firstSeconds: first(20, 60),
        }),
      ]),
    );
  const slow = run(first(40, 99));
  assert.equal(slow.get('first 3 s p50, 0 ms, 200/s'), false, '40 > 20 + 15');
  assert.equal(slow.get('first 3 s p99, 0 ms, 200/s'), true, '99 <= 60 + 40');
  const incomplete = run(first(20, 60, 599));
  assert.equal(incomplete.get('first 3 s p50, 0 ms, 200/s'), false, 'not every result came');
  // The steady part is checked as before, apart.
  assert.equal(slow.get('paced p50, 0 ms, 200/s'), true);
});

test('the report shows the first seconds under their scenario, with the ratio to the peer', () => {
  const firstOf = (p50Ms: number) => ({
    seconds: 3,
    commands: 600,
    completed: 600,
    latency: { p50Ms, p95Ms: 2 * p50Ms, p99Ms: 3 * p50Ms, maxMs: 4 * p50Ms, count: 600 },
  });
  const scenarios = [
    figures({ subject: 'ferry', kind: 'paced', ratePerSecond: 200, firstSeconds: firstOf(30) }),
    figures({ subject: 'peer', kind: 'paced', ratePerSecond: 200, firstSeconds: firstOf(10) }),
  ];
  const text = formatReport({
    meta: {
      date: 'd',
      commit: 'c',
      node: 'v',
      cpus: 2,
      cpuModel: 'm',
      quick: true,
      peerVersion: 'p',
      options: {},
    },
    micro: [],
    scenarios,
    targets: checkTargets(scenarios),
    durationSeconds: 1,
  });
  const lines = text.split('\n');
  const at = lines.findIndex((line) => line.includes('first 3 s after ready'));
  assert.ok(at > 0, text);
  assert.match(lines[at] ?? '', /ferry\s+-\s+30\s+60\s+90\s+120/);
  assert.match(lines[at + 1] ?? '', /redpanda-connect\s+-\s+10\s+20\s+30\s+40/);
  assert.match(lines[at + 2] ?? '', /ferry ÷ peer\s+3\.00x\s+3\.00x\s+3\.00x\s+3\.00x/);
});
