import assert from 'node:assert/strict';
import { readFileSync, symlinkSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { DASHBOARD_FILE, dashboardExpressions } from './deploy-files.ts';
import { findTool, parseYamlDocuments, repoRoot, run } from './external-tools.ts';

interface Panel {
  id: number;
  title: string;
  type: string;
  gridPos: { h: number; w: number; x: number; y: number };
  datasource?: { type: string; uid: string };
  targets?: { expr: string; refId: string; datasource?: { uid: string } }[];
}

/** Grafana's reference to the dashboard's `datasource` variable (a literal, not a JS template). */
const DATASOURCE_VARIABLE = '$' + '{datasource}';

/** The label matchers every query carries, one per template variable that scopes the data. */
const SCOPE_MATCHERS = [
  'cluster=~"$cluster"',
  'namespace=~"$namespace"',
  'job=~"$job"',
  'pod=~"$pod"',
];

const dashboardText = readFileSync(join(repoRoot, DASHBOARD_FILE), 'utf8');
const dashboard = JSON.parse(dashboardText) as {
  uid: string;
  title: string;
  id?: unknown;
  panels: Panel[];
  templating: { list: { name: string; type: string }[] };
};

test('the dashboard is provisioning-ready: fixed uid, no numeric id, a datasource variable', () => {
  assert.equal(dashboard.uid, 'ferry-overview');
  assert.equal(dashboard.id, undefined);
  const variables = dashboard.templating.list.map(
    (variable) => `${variable.name}:${variable.type}`,
  );
  assert.deepEqual(variables, [
    'datasource:datasource',
    'cluster:query',
    'namespace:query',
    'job:query',
    'pod:query',
  ]);
  const ids = dashboard.panels.map((panel) => panel.id);
  assert.equal(new Set(ids).size, ids.length, 'panel ids are unique');
  for (const panel of dashboard.panels.filter((p) => p.type !== 'row')) {
    assert.equal(panel.datasource?.uid, DATASOURCE_VARIABLE, panel.title);
    assert.ok(panel.gridPos.x + panel.gridPos.w <= 24, `${panel.title} fits the grid`);
    for (const target of panel.targets ?? []) {
      assert.equal(target.datasource?.uid, DATASOURCE_VARIABLE, panel.title);
      // Every selector of the query, not just one, is scoped by the variables.
      const selectors = target.expr.match(/\{[^}]*\}/g) ?? [];
      assert.ok(selectors.length > 0, `${panel.title}: ${target.expr} has a selector`);
      for (const selector of selectors) {
        for (const matcher of SCOPE_MATCHERS) {
          assert.ok(selector.includes(matcher), `${panel.title}: ${selector} lacks ${matcher}`);
        }
      }
    }
  }
});

test('the dashboard has a panel for each signal an operator watches', () => {
  const titles = dashboard.panels.map((panel) => panel.title);
  for (const title of [
    'Throughput in and out',
    'Results by outcome',
    'Gateway latency percentiles',
    'Batch sizes',
    'Consumer lag',
    'In flight and queued',
    'Retries by reason',
    'Callbacks by status',
    'Account balance',
    'Parts billed',
    'End-to-end latency percentiles',
    'Commands within 2 s',
    'Latency SLO burn rate',
    'Messages sent and receipts by channel',
    'Commands in doubt',
    'Oldest uncommitted command by partition',
  ]) {
    assert.ok(titles.includes(title), `panel "${title}"`);
  }
  const latency = dashboard.panels.find((panel) => panel.title === 'Gateway latency percentiles');
  const quantiles = latency?.targets?.map((target) => target.expr.match(/quantile\(([\d.]+)/)?.[1]);
  assert.deepEqual(quantiles?.filter(Boolean), ['0.5', '0.9', '0.99']);
});

test('the provisioning file points Grafana at a dashboards folder', () => {
  const [provisioning] = parseYamlDocuments(
    readFileSync(join(repoRoot, 'deploy/grafana/provisioning/dashboards/ferry.yaml'), 'utf8'),
  ) as [{ apiVersion: number; providers: { type: string; options: { path: string } }[] }];
  assert.equal(provisioning.apiVersion, 1);
  assert.equal(provisioning.providers[0]?.type, 'file');
  assert.match(provisioning.providers[0]?.options.path ?? '', /^\//);
});

/**
 * The dashboard's PromQL with Grafana's variables replaced by values Prometheus accepts,
 * as recording rules, so that promtool parses every query. Names: dashboard:q<n>.
 */
function dashboardQueriesAsRules(expressions: readonly string[]): string {
  const substituted = expressions.map((expr) =>
    expr
      .replaceAll('$__rate_interval', '5m')
      .replaceAll('$__interval', '1m')
      .replaceAll('$__range', '6h')
      .replace(/\$\{?(\w+)\}?/g, '.*'),
  );
  for (const expr of substituted) assert.ok(!expr.includes('$'), `a variable left in ${expr}`);
  const rules = substituted.map((expr, index) => ({ record: `dashboard:q${index}`, expr }));
  // JSON is YAML: promtool reads it as a rule file.
  return JSON.stringify({ groups: [{ name: 'ferry-dashboard', rules }] });
}

test('promtool parses every query of the dashboard (variables substituted)', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'ferry-dashboard-rules-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const expressions = [...dashboardExpressions().values()].flat();
  assert.ok(expressions.length >= 40, `the dashboard has its queries (${expressions.length})`);
  const good = join(dir, 'dashboard.rules.yml');
  await writeFile(good, dashboardQueriesAsRules(expressions));
  const result = run(findTool('promtool'), ['check', 'rules', good]);
  assert.equal(result.status, 0, result.stdout + result.stderr);
  assert.match(result.stdout, new RegExp(`SUCCESS: ${expressions.length} rules found`));

  // The same check refuses a query with an unbalanced parenthesis: it can fail.
  const broken = join(dir, 'broken.rules.yml');
  await writeFile(
    broken,
    dashboardQueriesAsRules([...expressions, 'sum(rate(ferry_results_total[5m])']),
  );
  assert.notEqual(run(findTool('promtool'), ['check', 'rules', broken]).status, 0);
});

/**
 * Type-checks a dashboard against `Dashboard` of @grafana/schema (Grafana's own generated
 * types of its dashboard schema) with the TypeScript compiler: the JSON is written as an
 * object literal with `satisfies`, so a field the schema does not know, a missing required
 * field or a wrong type fails. The schema's string enums (e.g. ThresholdsMode) are read as
 * their string values, which is what the JSON holds.
 */
async function typeCheckDashboard(
  json: string,
): Promise<{ status: number | null; output: string }> {
  const dir = await mkdtemp(join(tmpdir(), 'ferry-dashboard-types-'));
  try {
    symlinkSync(join(repoRoot, 'node_modules'), join(dir, 'node_modules'), 'dir');
    await writeFile(
      join(dir, 'dashboard.ts'),
      [
        "import type { Dashboard } from '@grafana/schema';",
        'type AsJson<T> = T extends string',
        // biome-ignore lint/suspicious/noTemplateCurlyInString: the TypeScript source being written
        '  ? `${T}`',
        '  : T extends number | boolean | null | undefined',
        '    ? T',
        '    : T extends readonly (infer U)[]',
        '      ? AsJson<U>[]',
        '      : T extends object',
        '        ? { [K in keyof T]: AsJson<T[K]> }',
        '        : T;',
        `export const dashboard = ${json.trim()} satisfies AsJson<Dashboard>;`,
        '',
      ].join('\n'),
    );
    await writeFile(
      join(dir, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          target: 'es2024',
          lib: ['es2024'],
          module: 'nodenext',
          moduleResolution: 'nodenext',
          strict: true,
          exactOptionalPropertyTypes: true,
          skipLibCheck: true,
          noEmit: true,
          types: [],
        },
        files: ['dashboard.ts'],
      }),
    );
    const tsc = join(repoRoot, 'node_modules', '.bin', 'tsc');
    const result = run(tsc, ['-p', join(dir, 'tsconfig.json')], { timeoutMs: 120_000 });
    return { status: result.status, output: result.stdout + result.stderr };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

test('the dashboard type-checks against the Dashboard type of @grafana/schema', async () => {
  const result = await typeCheckDashboard(dashboardText);
  assert.equal(result.status, 0, result.output);
});

test('the schema check refuses an unknown field and a wrong type (it can fail)', async () => {
  const unknownField = JSON.parse(dashboardText) as { panels: Record<string, unknown>[] };
  (unknownField.panels[1] as Record<string, unknown>).tilte = 'typo';
  const unknown = await typeCheckDashboard(JSON.stringify(unknownField));
  assert.notEqual(unknown.status, 0);
  assert.match(unknown.output, /tilte/);

  const wrongType = JSON.parse(dashboardText) as { refresh: unknown };
  wrongType.refresh = 30;
  const wrong = await typeCheckDashboard(JSON.stringify(wrongType));
  assert.notEqual(wrong.status, 0);
});
