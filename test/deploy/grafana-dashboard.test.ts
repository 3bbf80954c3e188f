import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { parseYamlDocuments, repoRoot } from './external-tools.ts';

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

const dashboard = JSON.parse(
  readFileSync(join(repoRoot, 'deploy/grafana/ferry-dashboard.json'), 'utf8'),
) as {
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
  assert.deepEqual(variables, ['datasource:datasource', 'namespace:query', 'pod:query']);
  const ids = dashboard.panels.map((panel) => panel.id);
  assert.equal(new Set(ids).size, ids.length, 'panel ids are unique');
  for (const panel of dashboard.panels.filter((p) => p.type !== 'row')) {
    assert.equal(panel.datasource?.uid, DATASOURCE_VARIABLE, panel.title);
    assert.ok(panel.gridPos.x + panel.gridPos.w <= 24, `${panel.title} fits the grid`);
    for (const target of panel.targets ?? []) {
      assert.equal(target.datasource?.uid, DATASOURCE_VARIABLE, panel.title);
      assert.match(target.expr, /namespace=~"\$namespace", pod=~"\$pod"/, panel.title);
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
