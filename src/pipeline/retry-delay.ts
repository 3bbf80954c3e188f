/**
 * How long an envelope waits after a failed attempt before it goes again: its backoff,
 * no less than the lookup delay when its items are to be looked up first (a request the
 * client gave up on may still be on its way through the gateway), and no less than what
 * is left of the hold a gateway's `Retry-After` put on every send of this replica.
 */
import type { FerryError } from '../errors.ts';
import type { Logger } from '../observability/logger.ts';
import { GatewayStatusError } from '../upstream/gateway-http.ts';
import type { RetryAfterHold } from './retry-after-hold.ts';

export interface RetryDelayOptions {
  readonly logger: Logger;
  readonly retryBaseMs: number;
  readonly retryMaxMs: number;
  /** Least wait before sends in doubt are looked up with `status`. */
  readonly lookupDelayMs: number;
}

/** Exponential backoff with full jitter between half and all of the step. */
export function backoffMs(attempt: number, baseMs: number, maxMs: number): number {
  const step = Math.min(maxMs, baseMs * 2 ** Math.max(0, attempt - 1));
  return step / 2 + Math.random() * (step / 2);
}

/**
 * The wait before the next attempt of an envelope that failed `attempts` times with
 * `error`; `lookupFirst` when items of it are looked up before they are sent again.
 * A 429/503 answer's `Retry-After` starts or lengthens `hold`.
 */
export function retryDelayMs(
  attempts: number,
  lookupFirst: boolean,
  error: FerryError,
  hold: RetryAfterHold,
  options: RetryDelayOptions,
): number {
  const backoff = backoffMs(attempts, options.retryBaseMs, options.retryMaxMs);
  const afterLookupDelay = lookupFirst ? Math.max(backoff, options.lookupDelayMs) : backoff;
  return Math.max(afterLookupDelay, holdFor(error, hold, options.logger));
}

/**
 * Holds every send of this replica as long as a 429/503 answer's `Retry-After` asks
 * (bounded); logs when that starts or lengthens the hold.
 * @returns the hold left, 0 when the error asked for none.
 */
function holdFor(error: FerryError, hold: RetryAfterHold, logger: Logger): number {
  if (!(error instanceof GatewayStatusError) || error.retryAfterMs === undefined) return 0;
  const before = hold.remainingMs;
  const left = hold.hold(error.retryAfterMs);
  if (left > before) {
    logger.warn(
      {
        statusCode: error.statusCode,
        retryAfterMs: error.retryAfterMs,
        holdMs: Math.round(left),
      },
      'the gateway asked to wait: every send of this replica holds until then',
    );
  }
  return left;
}
