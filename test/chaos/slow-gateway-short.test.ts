/**
 * The CI form of the slow-gateway scenario (the full one runs in `make chaos`): a
 * gateway answering in 3 s, a 6 s session and a 5 s request timeout, with and without
 * one of two replicas frozen for 12 s. See slow-gateway.ts for what is checked.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { runSlowGateway, slowGatewaySetting } from './slow-gateway.ts';

const base = { ...slowGatewaySetting, commands: 1_600, brokerHeapMb: 384 };

const variants = [
  { name: 'slow gateway, 6 s session', freezeMs: 0 },
  { name: 'slow gateway, 6 s session, one replica frozen 12 s', freezeMs: 12_000 },
];

for (const variant of variants) {
  test(`${variant.name}: every result in time, nothing sent twice, each command looked up at most once per handover, no needless rebalance`, {
    timeout: 240_000,
  }, async (t) => {
    const lines: string[] = [];
    const report = await runSlowGateway({
      ...base,
      freezeMs: variant.freezeMs,
      log: (line) => lines.push(line),
    });
    t.diagnostic(JSON.stringify(report.figures));
    assert.deepEqual(report.violations, [], lines.join('\n'));
  });
}

test('a gateway answering a tenth of requests after 8 s (past the 6 s session), and SIGTERM of one replica mid-send: exactly one result each, nothing sent twice', {
  timeout: 240_000,
}, async (t) => {
  const lines: string[] = [];
  const report = await runSlowGateway({
    ...base,
    commands: 800,
    freezeMs: 0,
    sigterm: true,
    slowAnswers: { rate: 0.1, ms: 8_000 },
    log: (line) => lines.push(line),
  });
  t.diagnostic(JSON.stringify(report.figures));
  assert.deepEqual(report.violations, [], lines.join('\n'));
});
