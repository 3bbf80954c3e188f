import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createMetrics } from '../../src/observability/metrics.ts';
import { alertExpressions, dashboardExpressions } from './deploy-files.ts';
import { metricNamesIn, unknownMetricNames } from './promql-names.ts';

test('the name extractor finds metric names and ignores functions, labels and keywords', () => {
  assert.deepEqual(
    metricNamesIn(
      'histogram_quantile(0.99, sum by (le, job) (rate(a_bucket{x=~"y|z", pod=~"$pod"}[$__rate_interval]))) > 5 and on (job) b_total offset 5m unless c',
    ),
    ['a_bucket', 'b_total', 'c'],
  );
});

test('a metric ferry does not export is reported', async () => {
  const { registry } = createMetrics();
  assert.deepEqual(
    await unknownMetricNames(registry, [
      'ferry_results_total',
      'ferry_no_such_metric_total',
      'ferry_envelope_operations_bucket',
      'ferry_results_total_bucket',
      'up',
    ]),
    ['ferry_no_such_metric_total', 'ferry_results_total_bucket'],
  );
});

test('every metric the alerts read exists in ferry /metrics', async () => {
  const { registry } = createMetrics();
  const expressions = alertExpressions();
  assert.ok(expressions.size >= 8, 'the alerts file has all the required alerts');
  for (const [alert, expr] of expressions) {
    const names = metricNamesIn(expr);
    assert.ok(names.length > 0, `${alert} reads a metric`);
    assert.deepEqual(await unknownMetricNames(registry, names), [], `${alert}: ${expr}`);
  }
});

test('every metric the dashboard reads exists in ferry /metrics', async () => {
  const { registry } = createMetrics();
  const expressions = dashboardExpressions();
  assert.ok(expressions.size >= 15);
  for (const [panel, exprs] of expressions) {
    for (const expr of exprs) {
      const names = metricNamesIn(expr);
      assert.ok(names.length > 0, `${panel} reads a metric: ${expr}`);
      assert.deepEqual(await unknownMetricNames(registry, names), [], `${panel}: ${expr}`);
    }
  }
});

test('every ferry metric is shown on the dashboard', async () => {
  const { registry } = createMetrics();
  const shown = new Set(
    [...dashboardExpressions().values()].flat().flatMap((expr) => metricNamesIn(expr)),
  );
  const ferryMetrics = (await registry.getMetricsAsJSON())
    .map((metric) => metric.name)
    .filter((name) => name.startsWith('ferry_'));
  const missing = ferryMetrics.filter(
    (name) => !shown.has(name) && !shown.has(`${name}_bucket`) && !shown.has(`${name}_sum`),
  );
  assert.deepEqual(missing, []);
});
