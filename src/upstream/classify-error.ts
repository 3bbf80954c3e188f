import { FerryError } from '../errors.ts';

// Socket-level failures where repeating the request may succeed (undici's retry-handler list).
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
  'UND_ERR_SOCKET',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
  'UND_ERR_CLOSED',
]);

// Failures that only happen before a connection exists: the request cannot have reached
// the gateway. (Unreachable-host or -network errors can also end a connection that was
// already open, after the request went out, so they prove nothing.)
const notConnectedCodes = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'UND_ERR_CONNECT_TIMEOUT',
]);

/**
 * Whether a failed request may still have been processed by the gateway: anything but
 * a failure to connect (a timeout, a reset, HTTP 5xx or a malformed answer may all
 * come after the gateway acted on the request).
 */
export function mayHaveReachedGateway(error: unknown): boolean {
  // Every cause is looked at: ferry's own error wraps the socket's, each with a code.
  let current: unknown = error;
  for (let depth = 0; depth < 8 && typeof current === 'object' && current !== null; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string' && notConnectedCodes.has(code)) return false;
    current = (current as { cause?: unknown }).cause;
  }
  return true;
}

function errorCode(error: unknown): string | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string') return code;
  return errorCode((error as { cause?: unknown }).cause);
}

/**
 * Classifies anything an HTTP call to the gateway threw, once, at the edge.
 * Whether the gateway may have processed the request is kept on `.cause` chain
 * semantics: a timeout or reset after the request was written is "outcome unknown".
 */
export function classifyUpstreamError(error: unknown, signal?: AbortSignal): FerryError {
  if (error instanceof FerryError) return error;
  if (signal?.aborted)
    return new FerryError('aborted', 'the request was aborted', { cause: error });
  const code = errorCode(error);
  const message = error instanceof Error ? error.message : String(error);
  if (code !== undefined && retryableSocketCodes.has(code)) {
    return new FerryError('transport', `gateway unreachable (${code}): ${message}`, {
      cause: error,
    });
  }
  if (error instanceof Error && error.name === 'TimeoutError') {
    return new FerryError('transport', `gateway request timed out: ${message}`, { cause: error });
  }
  return new FerryError('transport', `gateway request failed: ${message}`, { cause: error });
}
