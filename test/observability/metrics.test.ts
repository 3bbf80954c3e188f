import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import {
  type Counter,
  type Gauge,
  register as globalRegistry,
  type Histogram,
  Registry,
} from 'prom-client';
import {
  boundedStatusLabel,
  boundedTypeLabel,
  createMetrics,
  type FerryMetrics,
} from '../../src/observability/metrics.ts';

/** Name, type and label names of every ferry metric: the contract of docs/observability.md. */
const expected: Record<keyof Omit<FerryMetrics, 'registry'>, [string, string, string[]]> = {
  commandsConsumed: ['ferry_commands_consumed_total', 'counter', ['transport']],
  validationFailures: ['ferry_validation_failures_total', 'counter', ['rule']],
  envelopesSent: ['ferry_envelopes_total', 'counter', ['transport', 'outcome']],
  envelopeOperations: ['ferry_envelope_operations', 'histogram', ['transport']],
  gatewayRequestDuration: [
    'ferry_gateway_request_duration_seconds',
    'histogram',
    ['transport', 'outcome'],
  ],
  gatewayRequests: ['ferry_gateway_requests_total', 'counter', ['transport', 'outcome']],
  envelopesInFlight: ['ferry_envelopes_in_flight', 'gauge', ['lane']],
  envelopesQueued: ['ferry_envelopes_queued', 'gauge', ['lane']],
  envelopeRetries: ['ferry_envelope_retries_total', 'counter', ['transport', 'reason']],
  results: ['ferry_results_total', 'counter', ['type', 'stage', 'success']],
  commandsExpired: ['ferry_commands_expired_total', 'counter', ['type']],
  partsBilled: ['ferry_parts_billed_total', 'counter', []],
  callbacks: ['ferry_callbacks_total', 'counter', ['status', 'outcome']],
  httpConnectionsRefused: ['ferry_http_connections_refused_total', 'counter', ['port', 'reason']],
  adminCallsRefused: ['ferry_admin_calls_refused_total', 'counter', ['reason']],
  deadLetters: ['ferry_dead_letters_total', 'counter', ['reason']],
  internalErrors: ['ferry_internal_errors_total', 'counter', ['step']],
  consumerLag: ['ferry_consumer_lag', 'gauge', ['topic', 'partition']],
  accountBalance: ['ferry_account_balance', 'gauge', ['currency']],
  accessDenied: ['ferry_gateway_access_denied', 'gauge', ['lane']],
  consumptionPaused: ['ferry_consumption_paused', 'gauge', ['reason', 'lane']],
  kafkaErrors: ['ferry_kafka_errors_total', 'counter', ['client', 'kind']],
  kafkaTransactionalRequests: ['ferry_kafka_transactional_requests_total', 'counter', ['api']],
  consumerCrashes: ['ferry_consumer_crashes_total', 'counter', []],
  reconciliations: ['ferry_reconciliations_total', 'counter', ['outcome']],
  endToEnd: ['ferry_end_to_end_seconds', 'histogram', ['type']],
  stageDuration: ['ferry_pipeline_stage_seconds', 'histogram', ['stage']],
  messagesSent: ['ferry_messages_sent_total', 'counter', ['channel']],
  receipts: ['ferry_receipts_total', 'counter', ['channel']],
  oldestUncommitted: ['ferry_oldest_uncommitted_seconds', 'gauge', ['partition', 'lane']],
  commandsInDoubt: ['ferry_commands_in_doubt', 'gauge', ['lane']],
  buildInfo: ['ferry_build_info', 'gauge', ['version', 'node']],
  duplicates: ['ferry_duplicates_total', 'counter', ['source']],
  dedupeIds: ['ferry_dedupe_ids', 'gauge', ['partition', 'lane']],
  dedupeRestoreDuration: ['ferry_dedupe_restore_seconds', 'histogram', []],
  dedupeUnkeyed: ['ferry_dedupe_unkeyed_commands_total', 'counter', []],
  finalStatuses: ['ferry_final_statuses_total', 'counter', ['source']],
  awaitingStatus: ['ferry_messages_awaiting_status', 'gauge', ['partition', 'lane']],
  statusPolls: ['ferry_status_polls_total', 'counter', ['outcome']],
};

test('createMetrics registers every ferry metric with its type and labels', async () => {
  const metrics = createMetrics();
  const json = await metrics.registry.getMetricsAsJSON();
  for (const [field, [name, type]] of Object.entries(expected)) {
    const found = json.find((metric) => metric.name === name);
    assert.ok(found, `${field}: ${name} is registered`);
    assert.equal(String(found.type), type, `${name} is a ${type}`);
    assert.ok(field in metrics, `FerryMetrics has ${field}`);
  }
  const ferryNames = json.filter((m) => m.name.startsWith('ferry_')).map((m) => m.name);
  assert.equal(ferryNames.length, Object.keys(expected).length, 'no undocumented ferry metric');
});

test('metrics accept exactly their label names', () => {
  const metrics = createMetrics();
  for (const [field, [name, type, labels]] of Object.entries(expected)) {
    const metric = metrics[field as keyof typeof expected];
    const record = (values: Record<string, string>) => {
      if (type === 'counter') (metric as Counter<string>).inc(values, 1);
      else if (type === 'gauge') (metric as Gauge<string>).set(values, 1);
      else (metric as Histogram<string>).observe(values, 1);
    };
    const sample = Object.fromEntries(labels.map((label) => [label, 'x']));
    assert.doesNotThrow(() => record(sample), name);
    assert.throws(() => record({ ...sample, phone: '380501234567' }), /phone/, name);
  }
});

test('the text exposition shows ferry metrics, default metrics and initial series', async () => {
  const metrics = createMetrics();
  metrics.commandsConsumed.inc({ transport: 'sync' }, 3);
  metrics.envelopeOperations.observe({ transport: 'sync' }, 3);
  metrics.gatewayRequestDuration.observe({ transport: 'async', outcome: 'ok' }, 0.042);
  metrics.results.inc({ type: boundedTypeLabel('sms'), stage: 'upstream', success: 'true' });
  metrics.accountBalance.set({ currency: 'UAH' }, 125.5);
  const text = await metrics.registry.metrics();
  assert.match(text, /^ferry_commands_consumed_total\{transport="sync"\} 3$/m);
  assert.match(text, /^ferry_envelope_operations_bucket\{le="5",transport="sync"\} 1$/m);
  assert.match(
    text,
    /^ferry_gateway_request_duration_seconds_bucket\{le="0\.05",transport="async",outcome="ok"\} 1$/m,
  );
  assert.match(text, /^ferry_results_total\{type="sms",stage="upstream",success="true"\} 1$/m);
  assert.match(text, /^ferry_account_balance\{currency="UAH"\} 125\.5$/m);
  assert.match(text, /^ferry_gateway_access_denied 0$/m);
  assert.match(text, /^ferry_consumption_paused\{reason="access_denied"\} 0$/m);
  assert.match(text, /^ferry_consumer_crashes_total 0$/m);
  assert.match(
    text,
    /^ferry_http_connections_refused_total\{port="http",reason="per_client"\} 0$/m,
  );
  assert.match(text, /^ferry_http_connections_refused_total\{port="ops",reason="global"\} 0$/m);
  assert.match(text, /^ferry_admin_calls_refused_total\{reason="missing_token"\} 0$/m);
  assert.match(text, /^ferry_admin_calls_refused_total\{reason="wrong_token"\} 0$/m);
  assert.match(text, /^ferry_callbacks_total\{status="none",outcome="unauthorized"\} 0$/m);
  const { version } = JSON.parse(
    readFileSync(new URL('../../package.json', import.meta.url), 'utf8'),
  ) as { version: string };
  assert.ok(
    text.includes(`\nferry_build_info{version="${version}",node="${process.versions.node}"} 1\n`),
    'ferry_build_info names the package version and the Node version',
  );
  assert.match(text, /^process_cpu_user_seconds_total /m);
  assert.match(text, /^nodejs_eventloop_lag_seconds /m);
  assert.match(metrics.registry.contentType, /^text\/plain/);
});

test('createMetrics uses its own registry and never the global one', async () => {
  const before = (await globalRegistry.getMetricsAsJSON()).length;
  const first = createMetrics();
  const second = createMetrics(new Registry());
  assert.notEqual(first.registry, second.registry);
  assert.equal((await globalRegistry.getMetricsAsJSON()).length, before);
  const shared = new Registry();
  createMetrics(shared);
  assert.throws(() => createMetrics(shared), /already been registered/);
});

test('boundedStatusLabel keeps the statuses of the spec and folds the rest', () => {
  assert.equal(boundedStatusLabel('DELIVERED'), 'DELIVERED');
  assert.equal(boundedStatusLabel('read'), 'READ');
  assert.equal(boundedStatusLabel('REPLIED'), 'REPLIED');
  assert.equal(boundedStatusLabel('REJECTED'), 'REJECTED');
  assert.equal(boundedStatusLabel('SOMETHING_NEW'), 'other');
  assert.equal(boundedStatusLabel('380501234567'), 'other');
  assert.equal(boundedStatusLabel(''), 'none');
  assert.equal(boundedStatusLabel(undefined), 'none');
  assert.equal(boundedStatusLabel(42), 'none');
});

test('boundedTypeLabel keeps operation types of the spec only', () => {
  assert.equal(boundedTypeLabel('sms'), 'sms');
  assert.equal(boundedTypeLabel('rcs+viber+sms'), 'rcs+viber+sms');
  assert.equal(boundedTypeLabel('template/viber/list'), 'template/viber/list');
  assert.equal(boundedTypeLabel('whatsapp'), 'unknown');
  assert.equal(boundedTypeLabel(7), 'unknown');
});
