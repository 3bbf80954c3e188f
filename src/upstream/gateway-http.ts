import type { Transport } from '../contract/index.ts';
import { FerryError } from '../errors.ts';
import { classifyUpstreamError } from './classify-error.ts';
import { type ExchangeTarget, exchange, NotConnectedError, targetOf } from './http-exchange.ts';
import { parseRetryAfter, RETRY_AFTER_STATUSES } from './retry-after.ts';

export interface GatewayHttpOptions {
  /** `{base_url}` of the sync endpoint; requests go to `{base_url}/api/json.php`. */
  readonly syncBaseUrl: string;
  /** `{async_url}` of the async endpoint; requests go to `{async_url}/v1/json`. */
  readonly asyncBaseUrl?: string | undefined;
  /** Per-request timeout covering headers and body. Default 10 000 ms. */
  readonly requestTimeoutMs?: number;
  /** Keep-alive connections per origin. Default 32. */
  readonly connections?: number;
}

/** The raw answer of one POST; the contract module reads the body. */
export interface GatewayHttpAnswer {
  readonly body: string;
  readonly durationMs: number;
}

// spec: Endpoints. The sync path carries no version, the async one carries `v1`.
const paths: Record<Transport, string> = { sync: '/api/json.php', async: '/v1/json' };

interface Endpoint {
  readonly target: ExchangeTarget;
  /** The full URL requests go to (for traces). */
  readonly url: string;
}

/**
 * The longest answer body read (a `status` lookup of 500 ids answers some hundred KiB);
 * a longer one is dropped as a failed request that may have been acted on.
 */
const MAX_ANSWER_BYTES = 64 * 1024 * 1024;

/**
 * The gateway answered with an HTTP status other than 200; the status is kept for traces,
 * and a 429's or 503's `Retry-After` for the dispatcher, which holds every send that long.
 */
export class GatewayStatusError extends FerryError {
  readonly statusCode: number;
  /** The wait `Retry-After` asked for (429 and 503 only); undefined without a readable one. */
  readonly retryAfterMs: number | undefined;
  constructor(statusCode: number, retryAfterMs?: number) {
    const asked =
      retryAfterMs === undefined ? '' : ` (Retry-After ${Math.ceil(retryAfterMs / 1000)} s)`;
    super('transport', `gateway answered HTTP ${statusCode}${asked}`);
    this.statusCode = statusCode;
    this.retryAfterMs = retryAfterMs;
  }
}

function endpoint(baseUrl: string, transport: Transport, options: GatewayHttpOptions): Endpoint {
  const url = new URL(baseUrl);
  const prefix = url.pathname.replace(/\/+$/, '');
  const path = `${prefix}${paths[transport]}`;
  return {
    target: targetOf(url, path, options.connections ?? 32),
    url: `${url.origin}${path}`,
  };
}

/**
 * POSTs envelopes to the gateway over pooled keep-alive connections (Node's own client).
 * Every failure leaves as a FerryError: `transport` (retryable) for sockets,
 * timeouts, HTTP status other than 200 (the spec answers 200 in all cases).
 */
export class GatewayHttp {
  readonly #endpoints: Partial<Record<Transport, Endpoint>>;
  readonly #timeoutMs: number;
  /** Requests not yet ended, so that close can wait for them and destroy can end them. */
  readonly #inFlight = new Map<Promise<unknown>, AbortController>();
  /** Set by close and destroy: no request starts after them. */
  #closed = false;

  constructor(options: GatewayHttpOptions) {
    this.#timeoutMs = options.requestTimeoutMs ?? 10_000;
    this.#endpoints = { sync: endpoint(options.syncBaseUrl, 'sync', options) };
    if (options.asyncBaseUrl) {
      this.#endpoints.async = endpoint(options.asyncBaseUrl, 'async', options);
    }
  }

  supports(transport: Transport): boolean {
    return this.#endpoints[transport] !== undefined;
  }

  /** The URL a transport's requests go to; undefined when it has no endpoint. */
  urlOf(transport: Transport): string | undefined {
    return this.#endpoints[transport]?.url;
  }

  /**
   * @throws FerryError `transport` on any network failure, timeout or non-200 status;
   *   `aborted` when `signal` fired; `illegal_state` for a transport with no URL configured.
   */
  async post(transport: Transport, body: string, signal?: AbortSignal): Promise<GatewayHttpAnswer> {
    if (this.#closed) {
      // As undici's closed pool did: a transport failure, here one that provably never left.
      throw new FerryError('transport', 'gateway unreachable: the gateway client is closed', {
        cause: new NotConnectedError(new Error('the gateway client is closed')),
      });
    }
    const target = this.#endpoints[transport];
    if (!target) {
      throw new FerryError('illegal_state', `no ${transport} endpoint is configured`, {
        retryable: false,
      });
    }
    const started = performance.now();
    // One controller and one timer per request, both gone when it ends. AbortSignal.timeout
    // left a timer per request that still fired after its request was answered (building
    // a DOMException each time), and AbortSignal.any kept the signals linked meanwhile: at
    // a hundred envelopes a second that was work and garbage for nothing.
    const controller = new AbortController();
    const timer = setTimeout(
      () => controller.abort(requestTimedOut(this.#timeoutMs)),
      this.#timeoutMs,
    );
    const forwardAbort = () => controller.abort(signal?.reason);
    if (signal?.aborted) forwardAbort();
    else signal?.addEventListener('abort', forwardAbort, { once: true });
    try {
      const exchanged = exchange(target.target, body, controller.signal, MAX_ANSWER_BYTES);
      this.#inFlight.set(exchanged, controller);
      const response = await exchanged.finally(() => this.#inFlight.delete(exchanged));
      if (response.statusCode !== 200) {
        const retryAfterMs = RETRY_AFTER_STATUSES.has(response.statusCode)
          ? parseRetryAfter(response.headers['retry-after'], Date.now())
          : undefined;
        throw new GatewayStatusError(response.statusCode, retryAfterMs);
      }
      return { body: response.body, durationMs: performance.now() - started };
    } catch (error: unknown) {
      throw classifyUpstreamError(error, signal);
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener('abort', forwardAbort);
    }
  }

  #agents() {
    return [this.#endpoints.sync?.target.agent, this.#endpoints.async?.target.agent].filter(
      (agent) => agent !== undefined,
    );
  }

  /** Waits for the requests in flight, then closes the connections. */
  async close(): Promise<void> {
    this.#closed = true;
    await Promise.allSettled([...this.#inFlight.keys()]);
    for (const agent of this.#agents()) agent.destroy();
  }

  /** Aborts whatever is in flight and closes the connections. */
  async destroy(): Promise<void> {
    this.#closed = true;
    const pending = [...this.#inFlight];
    for (const [, controller] of pending)
      controller.abort(new Error('the gateway client was closed'));
    await Promise.allSettled(pending.map(([request]) => request));
    for (const agent of this.#agents()) agent.destroy();
  }
}

/** What a request past its timeout is aborted with: named as AbortSignal.timeout names it, which the classification reads. */
function requestTimedOut(timeoutMs: number): Error {
  const error = new Error(`no answer within ${timeoutMs} ms`);
  error.name = 'TimeoutError';
  return error;
}
