import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { ALERTS_FILE, ALERTS_TEST_FILE, readAlertsFile } from './deploy-files.ts';
import {
  findTool,
  type KubeObject,
  kustomizeBuild,
  parseYamlDocuments,
  repoRoot,
  run,
} from './external-tools.ts';

/** The alerts an operator needs (docs/observability.md), by the names ferry gives them. */
const REQUIRED_ALERTS = [
  'FerryGatewayAccessDenied',
  'FerryConsumerLagGrowing',
  'FerryEnvelopeErrorRatioHigh',
  'FerryDeadLetters',
  'FerryCallbacksRejected',
  'FerryBalanceLow',
  'FerryNoResults',
  'FerryConsumerCrashed',
];

function alertNames(): string[] {
  return readAlertsFile().groups.flatMap((group) =>
    group.rules.flatMap((rule) => (rule.alert ? [rule.alert] : [])),
  );
}

test('promtool check rules accepts the alerts', () => {
  const result = run(findTool('promtool'), ['check', 'rules', ALERTS_FILE]);
  assert.equal(result.status, 0, result.stdout + result.stderr);
  assert.match(result.stdout, /SUCCESS: \d+ rules found/);
});

test('promtool check rules refuses a broken rule (the check can fail)', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'ferry-rules-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const broken = join(dir, 'broken.yml');
  await writeFile(
    broken,
    'groups:\n  - name: x\n    rules:\n      - alert: X\n        expr: sum by (job (ferry_results_total)\n',
  );
  const result = run(findTool('promtool'), ['check', 'rules', broken]);
  assert.notEqual(result.status, 0);
});

test('promtool test rules passes the unit tests of every alert', () => {
  const result = run(findTool('promtool'), ['test', 'rules', ALERTS_TEST_FILE], {
    timeoutMs: 120_000,
  });
  assert.equal(result.status, 0, result.stdout + result.stderr);
  assert.match(result.stdout + result.stderr, /SUCCESS/);
});

test('every required alert exists and every alert has firing and silent test cases', () => {
  const names = alertNames();
  for (const required of REQUIRED_ALERTS) assert.ok(names.includes(required), required);
  assert.equal(new Set(names).size, names.length, 'alert names are unique');

  const [tests] = parseYamlDocuments(readFileSync(join(repoRoot, ALERTS_TEST_FILE), 'utf8')) as [
    {
      rule_files: string[];
      tests: { alert_rule_test?: { alertname: string; exp_alerts?: unknown[] }[] }[];
    },
  ];
  assert.deepEqual(tests.rule_files, ['ferry-alerts.yml']);
  const cases = tests.tests.flatMap((group) => group.alert_rule_test ?? []);
  for (const name of names) {
    const ofAlert = cases.filter((item) => item.alertname === name);
    assert.ok(
      ofAlert.some((item) => (item.exp_alerts ?? []).length > 0),
      `${name} has a case where it fires`,
    );
    assert.ok(
      ofAlert.some((item) => (item.exp_alerts ?? []).length === 0),
      `${name} has a case where it does not fire`,
    );
  }
  for (const rule of readAlertsFile().groups.flatMap((group) => group.rules)) {
    assert.match(
      rule.labels?.severity ?? '',
      /^(critical|warning|info)$/,
      `${rule.alert} severity`,
    );
    assert.ok(rule.annotations?.summary, `${rule.alert} summary`);
    assert.ok(rule.annotations?.description, `${rule.alert} description`);
  }
});

test('the PrometheusRule in the kustomize base carries exactly the alerts file', () => {
  const rendered = kustomizeBuild('deploy/k8s/base').find(
    (object: KubeObject) => object.kind === 'PrometheusRule',
  );
  assert.ok(rendered, 'the base renders a PrometheusRule');
  assert.deepEqual(
    (rendered.spec as { groups: unknown }).groups,
    readAlertsFile().groups,
    'deploy/k8s/base/prometheus-rule.yaml is stale: run deploy/prometheus/render-prometheus-rule.sh',
  );
});
