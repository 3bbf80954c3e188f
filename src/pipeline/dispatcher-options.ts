/**
 * What a Dispatcher is built with: the gateway and the send gate it works against, where it
 * reports, and the settings (FERRY_*) of its concurrency, rate, retries, `Retry-After` holds
 * and lookups.
 */

import type { Logger } from '../observability/logger.ts';
import type { FerryMetrics } from '../observability/metrics.ts';
import type { Tracer } from '../observability/tracing.ts';
import type { GatewayClient } from '../upstream/gateway-client.ts';
import type { RetryAfterHold } from './retry-after-hold.ts';
import type { SendGate } from './send-gate.ts';

export interface DispatcherOptions {
  readonly gateway: GatewayClient;
  readonly gate: SendGate;
  readonly logger: Logger;
  readonly metrics: FerryMetrics;
  /** Envelopes in flight at once (FERRY_CONCURRENCY). */
  readonly concurrency: number;
  /** Envelopes started per second at most; 0 for no cap (FERRY_RATE_LIMIT_RPS). */
  readonly rateLimitRps: number;
  /** HTTP attempts per envelope before its commands end at stage `transport`. */
  readonly maxAttempts: number;
  readonly retryBaseMs: number;
  readonly retryMaxMs: number;
  /**
   * Longest hold of every send after a 429/503 with `Retry-After` (FERRY_RETRY_AFTER_MAX_MS);
   * 0 ignores the header.
   */
  readonly retryAfterMaxMs: number;
  /**
   * The hold a gateway's `Retry-After` sets, shared by every dispatcher of the process (the
   * urgent lane's too), since the gateway asked the client, not one queue, to wait. A hold
   * of its own when absent.
   */
  readonly retryAfterHold?: RetryAfterHold | undefined;
  /**
   * Least wait after a failed attempt before its sends are looked up with `status`:
   * a request the client gave up on may still be on its way through the gateway.
   */
  readonly lookupDelayMs: number;
  /** Called when an answer says `Access denied`; the gate is already closed then. */
  readonly onAccessDenied: (error: string) => void;
  /** Traces each request in the traces of its commands; absent when tracing is off. */
  readonly tracer?: Tracer | undefined;
}
