/** What a Pipeline is built from: its ports, its topics and its settings. */

import type { Transport } from '../contract/index.ts';
import type { KafkaPort } from '../kafka/kafka-port.ts';
import type { Logger } from '../observability/logger.ts';
import type { FerryMetrics } from '../observability/metrics.ts';
import type { Tracer } from '../observability/tracing.ts';
import type { TrackingSettings } from '../tracking/status-tracker.ts';
import type { GatewayClient } from '../upstream/gateway-client.ts';
import type { PrepareOperation } from './command.ts';
import type { DedupeSettings } from './dedupe.ts';
import type { RetryAfterHold } from './retry-after-hold.ts';

export interface PipelineTopics {
  readonly commands: string;
  readonly results: string;
  readonly dlq: string;
}

export interface PipelineOptions {
  readonly kafka: KafkaPort;
  readonly gateway: GatewayClient;
  readonly logger: Logger;
  readonly metrics: FerryMetrics;
  readonly groupId: string;
  readonly topics: PipelineTopics;
  readonly defaultTransport: Transport;
  /** Prefix of the per-partition transactional ids; stable across restarts so a restarted replica fences its predecessor. */
  readonly transactionalIdPrefix: string;
  /**
   * `partition` (default): a transactional producer per partition, fenced by its id's
   * epoch; `lane`: one producer for the lane's partitions, fenced by the group membership
   * (FERRY_TRANSACTIONS, lane-transactions.ts).
   */
  readonly transactions?: 'partition' | 'lane' | undefined;
  readonly batchMaxOps: number;
  readonly lingerMs: number;
  readonly concurrency: number;
  readonly rateLimitRps: number;
  readonly maxAttempts: number;
  readonly retryBaseMs: number;
  readonly retryMaxMs: number;
  /** Longest send hold a gateway's `Retry-After` can ask for (FERRY_RETRY_AFTER_MAX_MS). */
  readonly retryAfterMaxMs: number;
  /** A `Retry-After` hold shared with the other lane (DispatcherOptions.retryAfterHold). */
  readonly retryAfterHold?: RetryAfterHold | undefined;
  /**
   * How long, counted on this replica's clock from its takeover, another replica's sends
   * of the partition can still be in flight (a request timeout plus a margin: that
   * replica stops starting sends once its lease lapses); only then are they looked up.
   */
  readonly inDoubtSettleMs: number;
  /**
   * A replica sends only while the group coordinator confirmed its membership less than
   * this long ago (ms). Shorter than the session timeout, so a replica that was frozen
   * or cut off stops sending before its partitions can have moved to another one.
   */
  readonly leaseMs: number;
  /** How long a fenced partition is left alone unless the group reassigns it (the session timeout). */
  readonly fencedHoldMs: number;
  /** Least wait between a failed attempt and the status lookup of its sends (the request timeout). */
  readonly lookupDelayMs: number;
  /** After `Access denied`, try sending again after this long; 0 waits for an operator. */
  readonly accessDeniedRetryMs: number;
  /** Adds fields to an operation before it is sent (hook injection). */
  readonly prepare?: PrepareOperation;
  /** Lower-case command header names copied to its result record (FERRY_PROPAGATE_HEADERS). */
  readonly propagateHeaders?: readonly string[];
  /**
   * Commands read and not yet committed, at most; past it fetching pauses until half
   * of them are done (backpressure: memory stays bounded whatever the partition count).
   */
  readonly maxCommandsInFlight: number;
  /** Bytes of the records of those commands, at most (FERRY_MAX_BYTES_IN_FLIGHT); same bound. */
  readonly maxBytesInFlight?: number;
  /** Batches of different partitions in progress at once. Default 16. */
  readonly partitionsConsumedConcurrently?: number;
  /** Bytes fetched per partition per request. Default 1 MiB. */
  readonly maxBytesPerPartition?: number;
  /**
   * Least time between the end of a partition's result transaction and the start of its
   * next, ms (FERRY_COMMIT_GAP_MS): batches answered meanwhile join the next one.
   */
  readonly commitGapMs?: number;
  /** Results in the partition of their key's hash, or in their command's partition number (FERRY_RESULTS_PARTITIONING). */
  readonly resultsPartitioning?: 'key' | 'source';
  /** Bytes of one fetch over all partitions. Default 4 MiB. */
  readonly maxBytes?: number;
  /** Command record values longer than this are refused unparsed (FERRY_COMMAND_MAX_BYTES). */
  readonly commandMaxBytes: number;
  /** Command record values nested deeper than this are refused unparsed (FERRY_COMMAND_MAX_DEPTH). */
  readonly commandMaxDepth: number;
  /** Deadlines by operation type for commands without the header (FERRY_EXPIRE_AFTER_MS). */
  readonly expireAfterMs?: ReadonlyMap<string, number>;
  /** Result and dead-letter records are cut to fit this many bytes (FERRY_RECORD_MAX_BYTES). */
  readonly recordMaxBytes: number;
  readonly sessionTimeoutMs?: number;
  /** The consumer stopped for good: the process should exit non-zero so its supervisor restarts it. */
  readonly onCrash: (error: Error) => void;
  /** Traces each command from consume to committed result; absent when tracing is off. */
  readonly tracer?: Tracer | undefined;
  /** A partition with commands read and nothing committed for this long is logged as stalled (ms). Default 60 000. */
  readonly stallAfterMs?: number;
  /** Duplicate suppression by command id (FERRY_DEDUPE); absent: every command is sent. */
  readonly dedupe?: DedupeSettings | undefined;
  /** Final status tracking (FERRY_STATUS_TRACKING); absent: messages are not tracked. */
  readonly tracking?: TrackingSettings | undefined;
}
