/**
 * The pipeline options of each lane, from the configuration: the bulk lane reads
 * FERRY_TOPIC_COMMANDS; the urgent lane, when FERRY_TOPIC_COMMANDS_URGENT is set, reads
 * that topic with a group, a dedupe topic and a send queue of its own, and writes to the
 * same results and dead-letter topics.
 */
import { createHookInjector } from './callbacks/index.ts';
import type { Config } from './config/config.ts';
import type { KafkaClient } from './kafka/kafka-client.ts';
import type { Logger } from './observability/logger.ts';
import type { FerryMetrics } from './observability/metrics.ts';
import type { Tracer } from './observability/tracing.ts';
import { fetchSizes } from './pipeline/in-flight-budget.ts';
import type { PipelineOptions } from './pipeline/pipeline-options.ts';
import type { RetryAfterHold } from './pipeline/retry-after-hold.ts';
import type { TrackingSettings } from './tracking/status-tracker.ts';
import type { GatewayClient } from './upstream/gateway-client.ts';

/** The consumer group of the urgent lane: the bulk group's name with `.urgent`. */
export function urgentGroupOf(config: Config): string {
  return `${config.FERRY_KAFKA_GROUP}.urgent`;
}

/** The urgent lane's dedupe topic: co-partitioned with the urgent commands, not the bulk ones. */
export function urgentDedupeTopicOf(config: Config): string {
  return `${config.FERRY_TOPIC_DEDUPE}.urgent`;
}

/** The urgent lane's tracking topic: co-partitioned with the urgent commands. */
export function urgentTrackingTopicOf(config: Config): string {
  return `${config.FERRY_TOPIC_TRACKING}.urgent`;
}

/** Every topic of final status tracking, when it is on: each lane's tracking topic and the final one. */
export function trackingTopicsOf(
  config: Config,
):
  | { readonly topic: string; readonly urgent: string | undefined; readonly final: string }
  | undefined {
  if (!config.FERRY_STATUS_TRACKING) return undefined;
  return {
    topic: config.FERRY_TOPIC_TRACKING,
    urgent: config.FERRY_TOPIC_COMMANDS_URGENT ? urgentTrackingTopicOf(config) : undefined,
    final: config.FERRY_TOPIC_STATUS_FINAL,
  };
}

/** The final status tracking settings of a lane, when tracking is on. */
export function trackingOf(config: Config, urgent: boolean): TrackingSettings | undefined {
  if (!config.FERRY_STATUS_TRACKING) return undefined;
  return {
    topic: urgent ? urgentTrackingTopicOf(config) : config.FERRY_TOPIC_TRACKING,
    finalTopic: config.FERRY_TOPIC_STATUS_FINAL,
    followMs: config.FERRY_STATUS_FOLLOW_MS,
    pollAfterMs: config.FERRY_STATUS_POLL_AFTER_MS,
    giveUpAfterMs: config.FERRY_STATUS_GIVE_UP_AFTER_MS,
    // A callback's message record may still be in a result transaction; one unclaimed for
    // a poll interval is a repeat of a finalized message (and the poll covers a mistake).
    orphanAfterMs: config.FERRY_STATUS_POLL_AFTER_MS,
    notFinal: new Set(config.FERRY_STATUS_NOT_FINAL.map((status) => status.toUpperCase())),
    maxPending: config.FERRY_STATUS_MAX_PENDING,
  };
}

export interface LaneDependencies {
  readonly kafka: KafkaClient;
  readonly gateway: GatewayClient;
  readonly logger: Logger;
  readonly metrics: FerryMetrics;
  readonly onCrash: (error: Error) => void;
  readonly tracer?: Tracer | undefined;
  readonly retryAfterHold: RetryAfterHold;
}

/**
 * The options of one lane's pipeline. @param urgent the urgent commands topic, for the
 * urgent lane; undefined for the bulk lane.
 */
export function laneOptions(
  config: Config,
  { kafka, gateway, logger, metrics, onCrash, tracer, retryAfterHold }: LaneDependencies,
  urgent?: string,
): PipelineOptions {
  return {
    kafka,
    gateway,
    logger: urgent ? logger.child({ lane: 'urgent' }) : logger,
    metrics,
    groupId: urgent ? urgentGroupOf(config) : config.FERRY_KAFKA_GROUP,
    topics: {
      commands: urgent ?? config.FERRY_TOPIC_COMMANDS,
      results: config.FERRY_TOPIC_RESULTS,
      dlq: config.FERRY_TOPIC_DLQ,
    },
    defaultTransport: config.FERRY_TRANSPORT,
    transactionalIdPrefix: config.FERRY_KAFKA_CLIENT_ID,
    transactions: config.FERRY_TRANSACTIONS,
    batchMaxOps: config.FERRY_BATCH_MAX_OPS,
    lingerMs: config.FERRY_BATCH_LINGER_MS,
    commitGapMs: config.FERRY_COMMIT_GAP_MS,
    stallAfterMs: config.FERRY_STALL_WARN_MS,
    resultsPartitioning: config.FERRY_RESULTS_PARTITIONING,
    dedupe: config.FERRY_DEDUPE
      ? {
          topic: urgent ? urgentDedupeTopicOf(config) : config.FERRY_TOPIC_DEDUPE,
          windowMs: config.FERRY_DEDUPE_WINDOW_MS,
          maxIds: config.FERRY_DEDUPE_MAX_IDS,
        }
      : undefined,
    tracking: trackingOf(config, urgent !== undefined),
    concurrency: urgent ? config.FERRY_CONCURRENCY_URGENT : config.FERRY_CONCURRENCY,
    rateLimitRps: config.FERRY_RATE_LIMIT_RPS,
    maxCommandsInFlight: config.FERRY_MAX_COMMANDS_IN_FLIGHT,
    maxAttempts: config.FERRY_MAX_ATTEMPTS,
    retryBaseMs: config.FERRY_RETRY_BASE_MS,
    retryMaxMs: config.FERRY_RETRY_MAX_MS,
    retryAfterMaxMs: config.FERRY_RETRY_AFTER_MAX_MS,
    retryAfterHold,
    accessDeniedRetryMs: config.FERRY_ACCESS_DENIED_RETRY_MS,
    // The gateway posts a message's final state to its hook (docs/gateway-api.md, Status
    // callbacks): sends without a `hook` get ferry's callback route, so statuses reach Kafka.
    ...(config.FERRY_CALLBACK_PUBLIC_URL && config.FERRY_CALLBACK_TOKEN
      ? {
          prepare: createHookInjector({
            publicUrl: config.FERRY_CALLBACK_PUBLIC_URL,
            token: config.FERRY_CALLBACK_TOKEN,
            propagateHeaders: config.FERRY_PROPAGATE_HEADERS,
            tracking: config.FERRY_STATUS_TRACKING
              ? { lane: urgent ? 'urgent' : undefined }
              : undefined,
          }),
        }
      : {}),
    propagateHeaders: config.FERRY_PROPAGATE_HEADERS,
    // Another replica's last send started before its lease lapsed, which is before the
    // group could move its partitions here; it ends within a request timeout.
    inDoubtSettleMs: config.FERRY_REQUEST_TIMEOUT_MS + 2_000,
    leaseMs: Math.floor(config.FERRY_KAFKA_SESSION_TIMEOUT_MS / 2),
    lookupDelayMs: config.FERRY_REQUEST_TIMEOUT_MS,
    fencedHoldMs: config.FERRY_KAFKA_SESSION_TIMEOUT_MS,
    sessionTimeoutMs: config.FERRY_KAFKA_SESSION_TIMEOUT_MS,
    maxBytesInFlight: config.FERRY_MAX_BYTES_IN_FLIGHT,
    ...fetchSizes(config.FERRY_MAX_BYTES_IN_FLIGHT, {
      maxBytes: config.FERRY_KAFKA_MAX_FETCH_BYTES,
      maxBytesPerPartition: config.FERRY_KAFKA_MAX_BYTES_PER_PARTITION,
    }),
    commandMaxBytes: config.FERRY_COMMAND_MAX_BYTES,
    commandMaxDepth: config.FERRY_COMMAND_MAX_DEPTH,
    expireAfterMs: config.FERRY_EXPIRE_AFTER_MS,
    recordMaxBytes: config.FERRY_RECORD_MAX_BYTES,
    onCrash,
    tracer,
  };
}
