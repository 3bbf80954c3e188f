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
  kustomizeBuildWith,
  parseYamlDocuments,
  repoRoot,
  run,
  runOk,
} from './external-tools.ts';

const RUNBOOKS_FILE = 'docs/runbooks.md';
/** The runbook base the rule file carries; render-prometheus-rule.sh swaps it for RUNBOOK_BASE_URL. */
const DEFAULT_RUNBOOK_BASE = 'https://github.com/example/ferry/blob/main/docs/runbooks.md';

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
  'FerryItemFailureRatioHigh',
  'FerryReceiptsStopped',
  'FerryLatencyBudgetBurnFast',
  'FerryLatencyBudgetBurnSlow',
  'FerryCommandsInDoubtStuck',
  'FerryUncommittedCommandOld',
  'FerryCallbacksNotFound',
  'FerryCallbacksUnauthorized',
];

/**
 * The anchors a Markdown file offers, as GitHub makes them: each heading's text in lower
 * case, punctuation removed, spaces as hyphens; plus explicit `id="…"` attributes.
 */
function markdownAnchors(markdown: string): Set<string> {
  const anchors = new Set<string>();
  for (const [, heading = ''] of markdown.matchAll(/^#{1,6}\s+(.+?)\s*#*$/gm)) {
    anchors.add(
      heading
        .toLowerCase()
        .replace(/[^\p{L}\p{N}\s_-]/gu, '')
        .replace(/\s/g, '-'),
    );
  }
  for (const [, id = ''] of markdown.matchAll(/\bid="([^"]+)"/g)) anchors.add(id);
  return anchors;
}

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

test('every alert has a runbook_url whose section exists in docs/runbooks.md', () => {
  const runbooks = readFileSync(join(repoRoot, RUNBOOKS_FILE), 'utf8');
  const anchors = markdownAnchors(runbooks);
  assert.ok(anchors.has('ferrygatewayaccessdenied'), 'the anchor reader finds headings');
  assert.ok(!anchors.has('ferrynosuchalert'));
  for (const rule of readAlertsFile().groups.flatMap((group) => group.rules)) {
    if (!rule.alert) continue;
    const url = rule.annotations?.runbook_url ?? '';
    assert.equal(
      url,
      `${DEFAULT_RUNBOOK_BASE}#${rule.alert.toLowerCase()}`,
      `${rule.alert}: runbook_url is the base plus the alert's anchor`,
    );
    assert.ok(
      anchors.has(rule.alert.toLowerCase()),
      `${RUNBOOKS_FILE} has a section ${rule.alert}`,
    );
    // The section says what it means, how to check, what to do.
    const section = runbooks.split(/^## /m).find((part) => part.startsWith(`${rule.alert}\n`));
    for (const part of ['**Means.**', '**Check.**', '**Act.**']) {
      assert.ok(section?.includes(part), `${rule.alert}: the runbook has ${part}`);
    }
  }
});

test('render-prometheus-rule.sh puts RUNBOOK_BASE_URL in every runbook_url', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'ferry-render-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const output = join(dir, 'rule.yaml');
  const base = 'https://runbooks.example.org/ferry/runbooks.html';
  runOk('bash', ['deploy/prometheus/render-prometheus-rule.sh'], {
    env: { RUNBOOK_BASE_URL: base, OUTPUT: output },
  });
  const [rendered] = parseYamlDocuments(readFileSync(output, 'utf8')) as [
    { spec: { groups: { rules: { alert?: string; annotations?: Record<string, string> }[] }[] } },
  ];
  const rules = rendered.spec.groups.flatMap((group) => group.rules);
  assert.equal(rules.length, readAlertsFile().groups.flatMap((group) => group.rules).length);
  for (const rule of rules) {
    if (!rule.alert) continue;
    assert.equal(rule.annotations?.runbook_url, `${base}#${rule.alert.toLowerCase()}`);
  }
});

test('the PrometheusRule of the monitoring component carries exactly the alerts file', () => {
  const rendered = kustomizeBuildWith('deploy/k8s/base', ['deploy/k8s/components/monitoring']).find(
    (object: KubeObject) => object.kind === 'PrometheusRule',
  );
  assert.ok(rendered, 'the monitoring component renders a PrometheusRule');
  assert.deepEqual(
    (rendered.spec as { groups: unknown }).groups,
    readAlertsFile().groups,
    'deploy/k8s/components/monitoring/prometheus-rule.yaml is stale: run deploy/prometheus/render-prometheus-rule.sh',
  );
});
