import { FerryError } from '../errors.ts';
import { NOT_CONNECTED } from './http-exchange.ts';

// Socket-level failures where repeating the request may succeed.
const retryableSocketCodes = new Set([
  'ECONNRESET',
  'ECONNREFUSED',
  'ENOTFOUND',
  'ENETDOWN',
  'ENETUNREACH',
  'EHOSTDOWN',
  'EHOSTUNREACH',
  'EPIPE',
  'ETIMEDOUT',
  'EAI_AGAIN',
]);

// Failures that only happen before a connection exists: the request cannot have reached
// the gateway. (Unreachable-host or -network errors can also end a connection that was
// already open, after the request went out, so they prove nothing by themselves; the
// HTTP edge marks every failure before its connection was made with NOT_CONNECTED.)
const notConnectedCodes = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', NOT_CONNECTED]);

/**
 * Whether a failed request may still have been processed by the gateway: anything but
 * a failure to connect (a timeout, a reset, HTTP 5xx or a malformed answer may all
 * come after the gateway acted on the request).
 */
export function mayHaveReachedGateway(error: unknown): boolean {
  // Every cause is looked at: ferry's own error wraps the socket's, each with a code.
  return !chainOf(error).some((link) => notConnectedCodes.has(codeOf(link) as string));
}

/** The errors of a cause chain, outermost first. */
function chainOf(error: unknown): object[] {
  const chain: object[] = [];
  let current: unknown = error;
  while (chain.length < 8 && typeof current === 'object' && current !== null) {
    chain.push(current);
    current = (current as { cause?: unknown }).cause;
  }
  return chain;
}

const codeOf = (error: object): unknown => (error as { code?: unknown }).code;

/**
 * Classifies anything an HTTP call to the gateway threw, once, at the edge.
 * Whether the gateway may have processed the request is kept on `.cause` chain
 * semantics: a timeout or reset after the request was written is "outcome unknown".
 */
export function classifyUpstreamError(error: unknown, signal?: AbortSignal): FerryError {
  if (error instanceof FerryError) return error;
  if (signal?.aborted)
    return new FerryError('aborted', 'the request was aborted', { cause: error });
  const chain = chainOf(error);
  const message = error instanceof Error ? error.message : String(error);
  const socketCode = chain.map(codeOf).find((code) => retryableSocketCodes.has(code as string));
  if (typeof socketCode === 'string') {
    return new FerryError('transport', `gateway unreachable (${socketCode}): ${message}`, {
      cause: error,
    });
  }
  const timedOut = chain.some((link) => link instanceof Error && link.name === 'TimeoutError');
  const notConnected = chain.some((link) => codeOf(link) === NOT_CONNECTED);
  if (timedOut && notConnected) {
    return new FerryError('transport', `gateway unreachable (no connection): ${message}`, {
      cause: error,
    });
  }
  if (timedOut) {
    return new FerryError('transport', `gateway request timed out: ${message}`, { cause: error });
  }
  const failed = notConnected ? 'gateway unreachable' : 'gateway request failed';
  return new FerryError('transport', `${failed}: ${message}`, { cause: error });
}
