/**
 * ferry's Prometheus metrics (prom-client), registered on a registry passed in,
 * never on prom-client's global one, so tests and several instances do not collide.
 * Labels are bounded sets only: never a phone number, an id or a text, which would
 * leak personal data and give Prometheus a series per value.
 * docs/observability.md lists them with their meaning; the dashboard and the alerts
 * in deploy/ use these names, and test/deploy checks that every name they use exists.
 */

import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import { isOperationType } from '../contract/index.ts';
import { FERRY_VERSION } from '../version.ts';
import { channels, UNKNOWN_CHANNEL } from './channels.ts';
import { createDedupeMetrics, type DedupeMetrics } from './dedupe-metrics.ts';
import { createTrackingMetrics, type TrackingMetrics } from './tracking-metrics.ts';

/** How ferry reached the gateway: the sync or the async endpoint (FERRY_TRANSPORT, header `ferry-transport`). */
export type TransportLabel = 'sync' | 'async';
/** How one envelope ended: `ok` (top-level success), `rejected` (top-level `success` false), `access_denied`, `transport_error` (gave up or will retry). */
export type EnvelopeOutcome = 'ok' | 'rejected' | 'access_denied' | 'transport_error';
/** The `stage` of a result record (README, Topics and records: Result). */
export type ResultStage = 'validation' | 'upstream' | 'transport';
/** What happened to one callback request. */
export type CallbackOutcome =
  | 'published'
  | 'duplicate'
  /** Not readable as a status event: written raw to the unparsed-callbacks topic. */
  | 'unparsed'
  | 'rejected'
  | 'unauthorized'
  | 'unavailable'
  /** Under /callbacks but not on the route: a callback URL built wrong (e.g. /callbacks twice). */
  | 'not_found';
/** Why the admin API refused a call before it ran: no `authorization: Bearer` metadata, or another token. */
export type AdminRefusalReason = 'missing_token' | 'wrong_token';
/** Which of ferry's HTTP ports: `http` (FERRY_HTTP_PORT, callbacks) or `ops` (FERRY_OPS_PORT, metrics and health). */
export type HttpPortLabel = 'http' | 'ops';
/** Why a connection was closed at accept: its client held its share, or the port held its cap. */
export type ConnectionRefusalReason = 'per_client' | 'global';
/** Why consumption is paused. */
export type PauseReason = 'operator' | 'access_denied' | 'backpressure' | 'draining' | 'tracking';
/** Which Kafka client reported an error. */
export type KafkaClientLabel = 'consumer' | 'producer' | 'admin';

/**
 * Status values the spec names (spec: States and transitions). The complete list
 * per channel is not shown there, so anything else is counted as `other`.
 */
export const knownStatuses: readonly string[] = ['DELIVERED', 'READ', 'REPLIED', 'REJECTED'];

/** The values of each bounded label. */
export const transports: readonly TransportLabel[] = ['sync', 'async'];
export const envelopeOutcomes: readonly EnvelopeOutcome[] = [
  'ok',
  'rejected',
  'access_denied',
  'transport_error',
];
export const callbackOutcomes: readonly CallbackOutcome[] = [
  'published',
  'duplicate',
  'unparsed',
  'rejected',
  'unauthorized',
  'unavailable',
  'not_found',
];
export const adminRefusalReasons: readonly AdminRefusalReason[] = ['missing_token', 'wrong_token'];
export const httpPorts: readonly HttpPortLabel[] = ['http', 'ops'];
export const connectionRefusalReasons: readonly ConnectionRefusalReason[] = [
  'per_client',
  'global',
];
export const pauseReasons: readonly PauseReason[] = [
  'operator',
  'access_denied',
  'backpressure',
  'draining',
  'tracking',
];

/** Every metric ferry exports besides the default process/Node ones (duplicate suppression's in dedupe-metrics.ts, final status tracking's in tracking-metrics.ts). */
export interface FerryMetrics extends DedupeMetrics, TrackingMetrics {
  /** The registry all of these (and the default metrics) are registered on. */
  readonly registry: Registry;
  /** `ferry_commands_consumed_total{transport}`: command records read from Kafka. */
  readonly commandsConsumed: Counter<'transport'>;
  /** `ferry_validation_failures_total{rule}`: commands refused before sending; `rule` is a fixed rule name, never a value. */
  readonly validationFailures: Counter<'rule'>;
  /** `ferry_envelopes_total{transport,outcome}`: envelopes (HTTP requests of operations) by outcome. */
  readonly envelopesSent: Counter<'transport' | 'outcome'>;
  /** `ferry_envelope_operations{transport}`: operations per envelope (batch size). */
  readonly envelopeOperations: Histogram<'transport'>;
  /** `ferry_gateway_request_duration_seconds{transport,outcome}`: one HTTP attempt, seconds. */
  readonly gatewayRequestDuration: Histogram<'transport' | 'outcome'>;
  /** `ferry_gateway_requests_total{transport,outcome}`: HTTP attempts to the gateway (pipeline and admin API). */
  readonly gatewayRequests: Counter<'transport' | 'outcome'>;
  /** `ferry_envelopes_in_flight`: envelopes sent and not answered yet. */
  readonly envelopesInFlight: Gauge<'lane'>;
  /** `ferry_envelopes_queued`: envelopes waiting for a dispatch slot. */
  readonly envelopesQueued: Gauge<'lane'>;
  /** `ferry_envelope_retries_total{transport,reason}`: repeated attempts; `reason` e.g. `timeout`, `connection`, `http_5xx`, `bad_body`. */
  readonly envelopeRetries: Counter<'transport' | 'reason'>;
  /** `ferry_results_total{type,stage,success}`: result records produced; `type` via {@link boundedTypeLabel}. */
  readonly results: Counter<'type' | 'stage' | 'success'>;
  /** `ferry_commands_expired_total{type}`: commands answered `expired`, never sent: their deadline passed first. */
  readonly commandsExpired: Counter<'type'>;
  /** `ferry_parts_billed_total`: sum of `parts` of successful sync sends. */
  readonly partsBilled: Counter;
  /** `ferry_callbacks_total{status,outcome}`: callback requests; `status` via {@link boundedStatusLabel}. */
  readonly callbacks: Counter<'status' | 'outcome'>;
  /** `ferry_admin_calls_refused_total{reason}`: admin API calls refused for their bearer token, every one (their log lines are rate-limited). */
  readonly adminCallsRefused: Counter<'reason'>;
  /**
   * `ferry_http_connections_refused_total{port,reason}`: connections closed at accept, on the
   * `http` or `ops` port, because their client held FERRY_HTTP_MAX_CONNECTIONS_PER_CLIENT
   * (`per_client`) or the port held FERRY_HTTP_MAX_CONNECTIONS (`global`).
   */
  readonly httpConnectionsRefused: Counter<'port' | 'reason'>;
  /** `ferry_dead_letters_total{reason}`: records written to the dead-letter topic; `reason` the rule of an unreadable record (`not_json`, `too_large`, …), `transport` or `internal`. */
  readonly deadLetters: Counter<'reason'>;
  /** `ferry_internal_errors_total{step}`: records ferry failed on (a bug); `step` `read` or `output`. Each got an `internal error` result and a dead letter. */
  readonly internalErrors: Counter<'step'>;
  /** `ferry_consumer_lag{topic,partition}`: high watermark minus committed offset, per assigned partition. */
  readonly consumerLag: Gauge<'topic' | 'partition'>;
  /** `ferry_account_balance{currency}`: last polled account balance. */
  readonly accountBalance: Gauge<'currency'>;
  /** `ferry_gateway_access_denied`: 1 while sending is stopped by `Access denied` (README, Guarantees 5), else 0. */
  readonly accessDenied: Gauge<'lane'>;
  /** `ferry_consumption_paused{reason}`: 1 while consumption is paused for that reason, else 0. */
  readonly consumptionPaused: Gauge<'reason' | 'lane'>;
  /** `ferry_kafka_errors_total{client,kind}`: errors reported by a Kafka client; `kind` a fixed error class name. */
  readonly kafkaErrors: Counter<'client' | 'kind'>;
  /** `ferry_kafka_transactional_requests_total{api}`: requests of the transactional producers, by Kafka API. */
  readonly kafkaTransactionalRequests: Counter<'api'>;
  /** `ferry_consumer_crashes_total`: the consumer stopped on an error (kafkajs `consumer.crash`). */
  readonly consumerCrashes: Counter;
  /** `ferry_reconciliations_total{outcome}`: commands in doubt looked up with `status` before a resend; `found` ones were not sent again. */
  readonly reconciliations: Counter<'outcome'>;
  /** `ferry_end_to_end_seconds{type}`: from a command record's Kafka timestamp to its result committed; `type` via {@link boundedTypeLabel}. */
  readonly endToEnd: Histogram<'type' | 'lane'>;
  /**
   * `ferry_pipeline_stage_seconds{stage}`: where a partition batch's time goes. `fetch`:
   * from its oldest record's Kafka timestamp until ferry got the batch; `wait`: behind the
   * partition's previous batch; `intent`: the send-intent transaction (only when written);
   * `send`: handed to the batcher until every command's outcome is known; `commit`: the
   * result transaction.
   */
  readonly stageDuration: Histogram<'stage' | 'lane'>;
  /** `ferry_messages_sent_total{channel}`: operations the gateway accepted, by channel (sms, viber, rcs, telegram, voice, pipeline, …). */
  readonly messagesSent: Counter<'channel'>;
  /** `ferry_receipts_total{channel}`: delivery-status callbacks written as status events, by channel (`unknown` when ferry cannot tell). */
  readonly receipts: Counter<'channel'>;
  /** `ferry_oldest_uncommitted_seconds{partition}`: age of the oldest command read and not yet committed, per owned partition (0 when none). */
  readonly oldestUncommitted: Gauge<'partition' | 'lane'>;
  /** `ferry_commands_in_doubt`: commands that may have been sent and whose outcome is not settled yet. */
  readonly commandsInDoubt: Gauge<'lane'>;
  /** `ferry_build_info{version,node}`: 1, labelled with the ferry release and the Node version. */
  readonly buildInfo: Gauge<'version' | 'node'>;
}

/** `ferry_envelope_operations` buckets: operations per envelope. */
export const ENVELOPE_OPERATIONS_BUCKETS: readonly number[] = [
  1, 2, 5, 10, 20, 50, 100, 200, 500, 1000,
];
/** `ferry_gateway_request_duration_seconds` buckets: 1 ms to 30 s. */
export const GATEWAY_DURATION_BUCKETS_SECONDS: readonly number[] = [
  0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 30,
];

/** Fine at the low end: the stages of a batch take milliseconds when all is well. */
export const STAGE_BUCKETS_SECONDS: readonly number[] = [
  0.001, 0.0025, 0.005, 0.01, 0.02, 0.03, 0.04, 0.05, 0.055, 0.06, 0.075, 0.1, 0.15, 0.25, 0.5, 1,
  2.5, 5,
];

/**
 * `ferry_end_to_end_seconds` buckets: 25 ms to 60 s, with 2 s (the latency objective) as a
 * bound, and fine from 50 to 250 ms, where an urgent command's p99 lies.
 */
export const END_TO_END_BUCKETS_SECONDS: readonly number[] = [
  0.025, 0.05, 0.075, 0.1, 0.125, 0.15, 0.175, 0.2, 0.25, 0.5, 1, 2, 5, 10, 30, 60,
];

/**
 * How often the event loop's delay is sampled (`nodejs_eventloop_lag_*`). prom-client's
 * default, 10 ms, is a timer waking the process 100 times a second for as long as it
 * lives: most of an idle replica's wake-ups, each of which costs an idle process
 * 140–220 µs of accounted CPU on a virtual machine. Ten samples a second still catch any
 * delay longer than 100 ms in full and shorter ones in proportion to how often they occur.
 */
export const EVENT_LOOP_SAMPLE_MS = 100;

/**
 * Creates ferry's metrics on `registry`, plus prom-client's default process and
 * Node metrics. Gauges with a fixed label set start at 0 so that dashboards and
 * alerts see the series before anything happens.
 *
 * @param registry where to register; default a new Registry (never the global one).
 * @param options.processMetrics the process and Node.js metrics too (default); a worker
 *   thread's registry goes without, the main thread's has them for the whole process.
 * @throws Error from prom-client when the registry already holds one of these names.
 */
export function createMetrics(
  registry: Registry = new Registry(),
  options: { processMetrics?: boolean } = {},
): FerryMetrics {
  const registers = [registry];
  if (options.processMetrics !== false) {
    collectDefaultMetrics({
      register: registry,
      eventLoopMonitoringPrecision: EVENT_LOOP_SAMPLE_MS,
    });
  }

  const metrics: FerryMetrics = {
    registry,
    commandsConsumed: new Counter({
      name: 'ferry_commands_consumed_total',
      help: 'Command records read from the commands topic.',
      labelNames: ['transport'] as const,
      registers,
    }),
    validationFailures: new Counter({
      name: 'ferry_validation_failures_total',
      help: 'Commands refused by validation before sending, by rule.',
      labelNames: ['rule'] as const,
      registers,
    }),
    envelopesSent: new Counter({
      name: 'ferry_envelopes_total',
      help: 'Envelopes sent to the gateway, by transport and outcome (ok, rejected, access_denied, transport_error).',
      labelNames: ['transport', 'outcome'] as const,
      registers,
    }),
    envelopeOperations: new Histogram({
      name: 'ferry_envelope_operations',
      help: 'Operations per envelope sent to the gateway.',
      labelNames: ['transport'] as const,
      buckets: [...ENVELOPE_OPERATIONS_BUCKETS],
      registers,
    }),
    gatewayRequestDuration: new Histogram({
      name: 'ferry_gateway_request_duration_seconds',
      help: 'Duration of one HTTP attempt to the gateway, in seconds.',
      labelNames: ['transport', 'outcome'] as const,
      buckets: [...GATEWAY_DURATION_BUCKETS_SECONDS],
      registers,
    }),
    gatewayRequests: new Counter({
      name: 'ferry_gateway_requests_total',
      help: 'HTTP attempts to the gateway (pipeline and admin API), by transport and outcome.',
      labelNames: ['transport', 'outcome'] as const,
      registers,
    }),
    envelopesInFlight: new Gauge({
      name: 'ferry_envelopes_in_flight',
      help: 'Envelopes sent to the gateway and not answered yet.',
      labelNames: ['lane'] as const,
      registers,
    }),
    envelopesQueued: new Gauge({
      name: 'ferry_envelopes_queued',
      help: 'Envelopes waiting for a dispatch slot.',
      labelNames: ['lane'] as const,
      registers,
    }),
    envelopeRetries: new Counter({
      name: 'ferry_envelope_retries_total',
      help: 'Repeated attempts of an envelope, by transport and reason.',
      labelNames: ['transport', 'reason'] as const,
      registers,
    }),
    results: new Counter({
      name: 'ferry_results_total',
      help: 'Result records produced, by operation type, stage and success.',
      labelNames: ['type', 'stage', 'success'] as const,
      registers,
    }),
    commandsExpired: new Counter({
      name: 'ferry_commands_expired_total',
      help: 'Commands answered expired and never sent: their deadline passed before they could go out, by operation type.',
      labelNames: ['type'] as const,
      registers,
    }),
    partsBilled: new Counter({
      name: 'ferry_parts_billed_total',
      help: 'Message parts billed by the gateway (sum of parts of sync sends).',
      registers,
    }),
    callbacks: new Counter({
      name: 'ferry_callbacks_total',
      help: 'Status callbacks received, by status and outcome (published, duplicate, unparsed, rejected, unauthorized, unavailable, not_found).',
      labelNames: ['status', 'outcome'] as const,
      registers,
    }),
    adminCallsRefused: new Counter({
      name: 'ferry_admin_calls_refused_total',
      help: 'Admin API calls refused before they ran, by reason (missing_token, wrong_token).',
      labelNames: ['reason'] as const,
      registers,
    }),
    httpConnectionsRefused: new Counter({
      name: 'ferry_http_connections_refused_total',
      help: 'HTTP connections closed at accept, by port (http, ops) and reason (per_client: the client held its share; global: the port held its cap).',
      labelNames: ['port', 'reason'] as const,
      registers,
    }),
    deadLetters: new Counter({
      name: 'ferry_dead_letters_total',
      help: 'Records written to the dead-letter topic, by reason.',
      labelNames: ['reason'] as const,
      registers,
    }),
    internalErrors: new Counter({
      name: 'ferry_internal_errors_total',
      help: 'Records ferry failed on while reading them or building their output; each got an internal-error result and a dead letter.',
      labelNames: ['step'] as const,
      registers,
    }),
    consumerLag: new Gauge({
      name: 'ferry_consumer_lag',
      help: 'Records behind the high watermark, per assigned partition of a consumed topic.',
      labelNames: ['topic', 'partition'] as const,
      registers,
    }),
    accountBalance: new Gauge({
      name: 'ferry_account_balance',
      help: 'Gateway account balance as last polled, in the account currency.',
      labelNames: ['currency'] as const,
      registers,
    }),
    accessDenied: new Gauge({
      name: 'ferry_gateway_access_denied',
      help: '1 while sending is stopped because the gateway answered Access denied, else 0.',
      labelNames: ['lane'] as const,
      registers,
    }),
    consumptionPaused: new Gauge({
      name: 'ferry_consumption_paused',
      help: '1 while consumption of commands is paused for the reason, else 0.',
      labelNames: ['reason', 'lane'] as const,
      registers,
    }),
    kafkaErrors: new Counter({
      name: 'ferry_kafka_errors_total',
      help: 'Errors reported by the Kafka clients, by client and kind.',
      labelNames: ['client', 'kind'] as const,
      registers,
    }),
    kafkaTransactionalRequests: new Counter({
      name: 'ferry_kafka_transactional_requests_total',
      help: 'Requests the transactional producers sent to Kafka, by API (a transaction takes about five).',
      labelNames: ['api'] as const,
      registers,
    }),
    consumerCrashes: new Counter({
      name: 'ferry_consumer_crashes_total',
      help: 'Times the Kafka consumer stopped on an error.',
      registers,
    }),
    reconciliations: new Counter({
      name: 'ferry_reconciliations_total',
      help: 'Commands in doubt looked up with the status operation before a resend, by outcome (found: not sent again).',
      labelNames: ['outcome'] as const,
      registers,
    }),
    endToEnd: new Histogram({
      name: 'ferry_end_to_end_seconds',
      help: "Seconds from a command record's Kafka timestamp to its result committed, by operation type.",
      labelNames: ['type', 'lane'] as const,
      buckets: [...END_TO_END_BUCKETS_SECONDS],
      registers,
    }),
    stageDuration: new Histogram({
      name: 'ferry_pipeline_stage_seconds',
      help: "Seconds a partition batch spends in each stage: fetch (oldest record's timestamp until ferry got the batch), wait (behind the partition's previous batch), intent, send, commit.",
      labelNames: ['stage', 'lane'] as const,
      buckets: [...STAGE_BUCKETS_SECONDS],
      registers,
    }),
    messagesSent: new Counter({
      name: 'ferry_messages_sent_total',
      help: 'Operations the gateway accepted, by channel.',
      labelNames: ['channel'] as const,
      registers,
    }),
    receipts: new Counter({
      name: 'ferry_receipts_total',
      help: 'Delivery-status callbacks written as status events, by channel (unknown when ferry cannot tell).',
      labelNames: ['channel'] as const,
      registers,
    }),
    oldestUncommitted: new Gauge({
      name: 'ferry_oldest_uncommitted_seconds',
      help: 'Age of the oldest command read and not yet committed, per owned partition (0 when none).',
      labelNames: ['partition', 'lane'] as const,
      registers,
    }),
    commandsInDoubt: new Gauge({
      name: 'ferry_commands_in_doubt',
      help: 'Commands that may have been sent and whose outcome is not settled yet.',
      labelNames: ['lane'] as const,
      registers,
    }),
    buildInfo: new Gauge({
      name: 'ferry_build_info',
      help: 'Always 1; its labels name the ferry release and the Node version running it.',
      labelNames: ['version', 'node'] as const,
      registers,
    }),
    ...createDedupeMetrics(registry),
    ...createTrackingMetrics(registry),
  };

  // Series that exist from the start, at 0: dashboards draw flat lines instead of
  // "no data", and increase()/rate() in the alerts see the first event (a counter
  // series born at 1 has no increase).
  metrics.accessDenied.set(0);
  metrics.envelopesInFlight.set(0);
  metrics.envelopesQueued.set(0);
  metrics.consumerCrashes.inc(0);
  for (const outcome of ['found', 'not_found']) metrics.reconciliations.inc({ outcome }, 0);
  metrics.buildInfo.set({ version: FERRY_VERSION, node: process.versions.node }, 1);
  metrics.partsBilled.inc(0);
  metrics.commandsInDoubt.set(0);
  for (const channel of channels) {
    metrics.messagesSent.inc({ channel }, 0);
    metrics.receipts.inc({ channel }, 0);
  }
  metrics.receipts.inc({ channel: UNKNOWN_CHANNEL }, 0);
  for (const reason of pauseReasons) metrics.consumptionPaused.set({ reason }, 0);
  for (const transport of transports) {
    metrics.commandsConsumed.inc({ transport }, 0);
    for (const outcome of envelopeOutcomes) metrics.envelopesSent.inc({ transport, outcome }, 0);
  }
  metrics.deadLetters.inc({ reason: 'transport' }, 0);
  for (const step of ['read', 'output']) metrics.internalErrors.inc({ step }, 0);
  for (const reason of adminRefusalReasons) metrics.adminCallsRefused.inc({ reason }, 0);
  for (const port of httpPorts) {
    for (const reason of connectionRefusalReasons) {
      metrics.httpConnectionsRefused.inc({ port, reason }, 0);
    }
  }
  for (const status of [...knownStatuses, 'other', 'none']) {
    for (const outcome of callbackOutcomes) metrics.callbacks.inc({ status, outcome }, 0);
  }
  return metrics;
}

/**
 * A callback `status` as a bounded label: a status the spec names (upper-cased),
 * `other` for any other string, `none` when absent or not a string.
 */
export function boundedStatusLabel(status: unknown): string {
  if (typeof status !== 'string' || status.length === 0) return 'none';
  const upper = status.toUpperCase();
  return knownStatuses.includes(upper) ? upper : 'other';
}

/** A command `type` as a bounded label: an operation type of the spec, else `unknown`. */
export function boundedTypeLabel(type: unknown): string {
  return isOperationType(type) ? type : 'unknown';
}
