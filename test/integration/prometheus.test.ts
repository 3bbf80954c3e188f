/**
 * A real Prometheus server (Debian's `prometheus`, installed by tools/install-tools.sh)
 * on loopback scrapes an HttpServer serving ferry's metrics, loads ferry's alert rules,
 * and answers queries for ferry's metrics, for every dashboard expression, and for an
 * alert that ferry's own gauge sets pending: the whole chain from gauge to alert works.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { HttpServer } from '../../src/http/http-server.ts';
import { registerOpsRoutes } from '../../src/observability/health.ts';
import { createLogger } from '../../src/observability/logger.ts';
import { createMetrics } from '../../src/observability/metrics.ts';
import { freePort } from '../../tools/kafka/broker.ts';
import { ALERTS_FILE, alertExpressions, dashboardExpressions } from '../deploy/deploy-files.ts';
import { findTool, repoRoot } from '../deploy/external-tools.ts';
import { removeWhenDone } from '../helpers/scratch-dir.ts';

const API_KEY = 'prometheus-test-key-5b1e0c';
const PHONE = '380509876543';

interface ApiAnswer<T> {
  status: 'success' | 'error';
  data: T;
  error?: string;
}

interface VectorSample {
  metric: Record<string, string>;
  value: [number, string];
}

/** Stops a child process: SIGTERM, then SIGKILL after `graceMs`. */
async function stopProcess(child: ChildProcess, graceMs = 10_000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, 'exit');
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
  await exited;
  clearTimeout(timer);
}

/** Polls `check` until it returns a value, or fails after `timeoutMs` with the last error. */
async function eventually<T>(
  what: string,
  check: () => Promise<T | undefined>,
  timeoutMs = 30_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline) {
    try {
      const value = await check();
      if (value !== undefined) return value;
    } catch (error: unknown) {
      last = error;
    }
    await sleep(250);
  }
  throw new Error(`timed out waiting for ${what}${last ? `: ${String(last)}` : ''}`);
}

test('a real Prometheus scrapes ferry and answers queries for its metrics', async (t) => {
  const prometheus = findTool('prometheus');
  const dir = await mkdtemp(join(tmpdir(), 'ferry-prometheus-'));

  // ferry's side: metrics with values, served as on ferry's operations port.
  const logFile = join(dir, 'ferry.log');
  const logger = createLogger({ destination: logFile, level: 'debug', secrets: [API_KEY] });
  const metrics = createMetrics();
  metrics.commandsConsumed.inc({ transport: 'sync' }, 7);
  metrics.results.inc({ type: 'sms', stage: 'upstream', success: 'true' }, 6);
  metrics.results.inc({ type: 'sms', stage: 'validation', success: 'false' }, 1);
  for (const seconds of [0.012, 0.015, 0.02, 0.022]) {
    metrics.gatewayRequestDuration.observe({ transport: 'sync', outcome: 'ok' }, seconds);
  }
  metrics.envelopeOperations.observe({ transport: 'sync' }, 6);
  metrics.accountBalance.set({ currency: 'UAH' }, 1234.5);
  metrics.consumerLag.set({ topic: 'ferry.commands', partition: '0' }, 3);
  metrics.accessDenied.set(1);
  for (const seconds of [0.04, 0.3, 0.6, 1.5]) metrics.endToEnd.observe({ type: 'sms' }, seconds);
  metrics.messagesSent.inc({ channel: 'sms' }, 4);
  metrics.receipts.inc({ channel: 'sms' }, 3);
  metrics.oldestUncommitted.set({ partition: '0' }, 2.5);
  metrics.commandsInDoubt.set(2);
  const server = new HttpServer({ name: 'ops', host: '127.0.0.1', port: 0, logger });
  registerOpsRoutes(server, {
    metrics,
    health: { live: () => true, ready: () => ({ ready: true, reasons: [] }) },
  });
  t.after(() => server.stop());
  await server.start();
  logger.info({ auth: API_KEY, phone: PHONE }, `scrape target ready for ${PHONE}`);

  // Prometheus: 1 s scrapes of that server, ferry's alert rules, its own loopback port.
  const port = await freePort();
  const config = join(dir, 'prometheus.yml');
  await writeFile(
    config,
    [
      'global:',
      '  scrape_interval: 1s',
      '  scrape_timeout: 900ms',
      '  evaluation_interval: 1s',
      'rule_files:',
      `  - ${JSON.stringify(join(repoRoot, ALERTS_FILE))}`,
      'scrape_configs:',
      '  - job_name: ferry',
      '    static_configs:',
      `      - targets: ['127.0.0.1:${server.port}']`,
      '',
    ].join('\n'),
  );
  let output = '';
  const child = spawn(
    prometheus,
    [
      `--config.file=${config}`,
      `--storage.tsdb.path=${join(dir, 'data')}`,
      `--web.listen-address=127.0.0.1:${port}`,
      '--log.level=warn',
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString('utf8')).slice(-8_000);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  t.after(() => stopProcess(child));
  removeWhenDone(t, dir);
  child.on('exit', (code) => {
    if (code !== null && code !== 0) output += `\nprometheus exited with ${code}`;
  });

  const base = `http://127.0.0.1:${port}`;
  const api = async <T>(path: string): Promise<ApiAnswer<T>> => {
    const answer = await fetch(`${base}${path}`, { signal: AbortSignal.timeout(5_000) });
    return (await answer.json()) as ApiAnswer<T>;
  };
  const query = (expr: string) =>
    api<{ resultType: string; result: VectorSample[] }>(
      `/api/v1/query?query=${encodeURIComponent(expr)}`,
    );

  try {
    await eventually('Prometheus ready', async () => {
      const answer = await fetch(`${base}/-/ready`);
      return answer.ok ? true : undefined;
    });

    // The scrape works and ferry's metrics answer queries.
    const up = await eventually('the ferry target to be up', async () => {
      const answer = await query('up{job="ferry"}');
      return answer.data.result[0]?.value[1] === '1' ? answer : undefined;
    });
    assert.equal(up.data.result[0]?.metric.instance, `127.0.0.1:${server.port}`);
    const consumed = await query('sum(ferry_commands_consumed_total{job="ferry"})');
    assert.equal(consumed.data.result[0]?.value[1], '7');
    const results = await query('sum by (stage) (ferry_results_total{job="ferry"})');
    const byStage = Object.fromEntries(
      results.data.result.map((sample) => [sample.metric.stage, sample.value[1]]),
    );
    assert.deepEqual(byStage, { upstream: '6', validation: '1' });
    const median = await query(
      'histogram_quantile(0.5, sum by (le) (ferry_gateway_request_duration_seconds_bucket{job="ferry"}))',
    );
    const medianSeconds = Number(median.data.result[0]?.value[1]);
    assert.ok(medianSeconds > 0.01 && medianSeconds <= 0.025, `median ${medianSeconds}`);
    const balance = await query('ferry_account_balance{job="ferry"}');
    assert.equal(balance.data.result[0]?.value[1], '1234.5');
    // The service-level metrics: end-to-end median by type, sends against receipts.
    const endToEnd = await query(
      'histogram_quantile(0.5, sum by (le, type) (ferry_end_to_end_seconds_bucket{job="ferry"}))',
    );
    assert.equal(endToEnd.data.result[0]?.metric.type, 'sms');
    const endToEndMedian = Number(endToEnd.data.result[0]?.value[1]);
    assert.ok(endToEndMedian > 0.25 && endToEndMedian <= 0.5, `median ${endToEndMedian}`);
    const unreceipted = await query(
      'sum by (channel) (ferry_messages_sent_total{job="ferry",channel="sms"}) - sum by (channel) (ferry_receipts_total{job="ferry",channel="sms"})',
    );
    assert.equal(unreceipted.data.result[0]?.value[1], '1');
    const oldest = await query('max(ferry_oldest_uncommitted_seconds{job="ferry"})');
    assert.equal(oldest.data.result[0]?.value[1], '2.5');
    const inDoubt = await query('ferry_commands_in_doubt{job="ferry"}');
    assert.equal(inDoubt.data.result[0]?.value[1], '2');

    // Every ferry metric that has a series reached Prometheus under its exposed name.
    const names = await api<string[]>(
      `/api/v1/label/__name__/values?${new URLSearchParams({ 'match[]': '{job="ferry"}' })}`,
    );
    const stored = new Set(names.data);
    let checked = 0;
    for (const metric of await metrics.registry.getMetricsAsJSON()) {
      const series = String(metric.type) === 'histogram' ? `${metric.name}_bucket` : metric.name;
      if (metric.name.startsWith('ferry_') && metric.values.length > 0) {
        assert.ok(stored.has(series), series);
        checked += 1;
      }
    }
    assert.ok(checked >= 15, `${checked} ferry metrics with series`);
    assert.ok(stored.has('process_resident_memory_bytes'));

    // Every dashboard query is valid PromQL for a real server.
    for (const [panel, exprs] of dashboardExpressions()) {
      for (const expr of exprs) {
        const concrete = expr
          .replaceAll('$__rate_interval', '1m')
          .replaceAll('$__range', '5m')
          // The scope variables (cluster, namespace, job, pod) as "All".
          .replace(/\$\{?(\w+)\}?/g, '.*');
        const answer = await query(concrete);
        assert.equal(answer.status, 'success', `${panel}: ${concrete}: ${answer.error}`);
      }
    }

    // The alert rules loaded and evaluate; ferry's gauge makes Access denied pending.
    const rules = await eventually('the alert rules to evaluate', async () => {
      const answer = await api<{
        groups: { rules: { name: string; health: string; lastError?: string }[] }[];
      }>('/api/v1/rules?type=alert');
      const all = answer.data.groups.flatMap((group) => group.rules);
      return all.length > 0 && all.every((rule) => rule.health === 'ok') ? all : undefined;
    });
    assert.deepEqual(rules.map((rule) => rule.name).sort(), [...alertExpressions().keys()].sort());
    await eventually('FerryGatewayAccessDenied to be pending', async () => {
      const answer = await api<{ alerts: { labels: Record<string, string>; state: string }[] }>(
        '/api/v1/alerts',
      );
      return answer.data.alerts.find(
        (alert) => alert.labels.alertname === 'FerryGatewayAccessDenied',
      );
    });
  } catch (error: unknown) {
    throw new Error(
      `${error instanceof Error ? error.message : String(error)}\n--- prometheus:\n${output}`,
      {
        cause: error,
      },
    );
  }

  // What ferry logged during the test holds neither the API key nor the phone number.
  await server.stop();
  logger.flush();
  const logged = await readFile(logFile, 'utf8');
  assert.match(logged, /scrape target ready/);
  assert.equal(logged.includes(API_KEY), false);
  assert.equal(logged.includes(PHONE), false);
});
