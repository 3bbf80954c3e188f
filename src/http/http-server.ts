/**
 * The one HTTP server on FERRY_HTTP_PORT that the callback receiver, `/metrics`
 * and the health probes share (README, HTTP, metrics and logs). A tiny router over node:http:
 * exact segments and `:name` parameters, 404 for an unknown path, 405 with `Allow`
 * for a known path and another method, 500 when a handler throws, without
 * stopping the server: bad input never stops the flow (README, Guarantees 3).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { FerryError } from '../errors.ts';
import type { Logger } from '../observability/logger.ts';

/** Handles one request; `params` holds the `:name` segments of the route, URL-decoded. */
export type RouteHandler = (
  req: IncomingMessage,
  res: ServerResponse,
  params: Record<string, string>,
) => void | Promise<void>;

export type HttpMethod = 'GET' | 'POST';

/** Settings for {@link HttpServer}. */
export interface HttpServerOptions {
  /** Interface to listen on. Default `0.0.0.0` (in a pod the kubelet probes the pod IP). */
  readonly host?: string;
  /** TCP port; 0 picks a free one (tests). */
  readonly port: number;
  readonly logger: Logger;
  /** Time allowed to receive a whole request (headers and body), ms. Default 30000. */
  readonly requestTimeoutMs?: number;
  /** Time allowed to receive the headers, ms. Default 10000 (must not exceed requestTimeoutMs). */
  readonly headersTimeoutMs?: number;
  /** Idle keep-alive time of a connection, ms. Default 5000. */
  readonly keepAliveTimeoutMs?: number;
  /** Connections held at once; past it new ones are closed at accept. Default 1024. */
  readonly maxConnections?: number;
  /** Largest request head (request line and headers), bytes; past it 431. Default 16384. */
  readonly maxHeaderBytes?: number;
  /** Hears of every request answered 404 for an unknown path (its path), e.g. to count them. */
  readonly onNotFound?: (pathname: string) => void;
  /** How long stop() lets open requests finish before closing their sockets, ms. Default 5000. */
  readonly closeGraceMs?: number;
}

interface Route {
  readonly method: HttpMethod;
  readonly pattern: string;
  readonly segments: readonly string[];
  readonly handler: RouteHandler;
}

type State = 'idle' | 'starting' | 'listening' | 'stopping' | 'stopped';

/** A started-and-stopped HTTP server with a small router. */
export class HttpServer {
  readonly #options: HttpServerOptions;
  readonly #logger: Logger;
  readonly #routes: Route[] = [];
  readonly #server: Server;
  #state: State = 'idle';
  #port = 0;
  #starting: Promise<void> | undefined;
  #stopping: Promise<void> | undefined;

  constructor(options: HttpServerOptions) {
    this.#options = options;
    this.#logger = options.logger.child({ component: 'http' });
    const requestTimeout = options.requestTimeoutMs ?? 30_000;
    this.#server = createServer(
      {
        requestTimeout,
        headersTimeout: Math.min(options.headersTimeoutMs ?? 10_000, requestTimeout),
        keepAliveTimeout: options.keepAliveTimeoutMs ?? 5_000,
        maxHeaderSize: options.maxHeaderBytes ?? 16 * 1024,
      },
      (req, res) => {
        void this.#dispatch(req, res);
      },
    );
    // A flood of connections (or slow clients holding them) must not exhaust file
    // descriptors that Kafka and the gateway connections need.
    this.#server.maxConnections = options.maxConnections ?? 1024;
    this.#server.on('clientError', (error: NodeJS.ErrnoException, socket) => {
      // Malformed requests and timeouts: answer when we still can, never crash.
      this.#logger.debug({ err: error }, 'Bad HTTP request from a client.');
      if (socket.writable) socket.end(clientErrorAnswer(error.code));
      else socket.destroy();
    });
  }

  /**
   * Adds a route. Patterns are absolute paths whose segments are literals or
   * `:name` parameters, e.g. `/callbacks/:token`. Literal routes added earlier win.
   *
   * @throws FerryError `illegal_state` after start(), or when the same method and pattern exist.
   */
  route(method: HttpMethod, pattern: string, handler: RouteHandler): void {
    if (this.#state !== 'idle') {
      throw new FerryError('illegal_state', 'routes must be added before the HTTP server starts');
    }
    if (!pattern.startsWith('/')) {
      throw new FerryError('internal', `route pattern must start with "/": ${pattern}`);
    }
    if (this.#routes.some((route) => route.method === method && route.pattern === pattern)) {
      throw new FerryError('illegal_state', `route ${method} ${pattern} is already registered`);
    }
    this.#routes.push({ method, pattern, segments: splitPath(pattern), handler });
  }

  /**
   * Starts listening. Idempotent while starting or listening.
   *
   * @throws FerryError `illegal_state` after stop(); `internal` when the port cannot be bound.
   */
  start(): Promise<void> {
    if (this.#state === 'stopping' || this.#state === 'stopped') {
      return Promise.reject(new FerryError('illegal_state', 'the HTTP server was stopped'));
    }
    this.#starting ??= new Promise<void>((resolve, reject) => {
      this.#state = 'starting';
      const onError = (error: Error) => {
        this.#state = 'stopped';
        reject(
          new FerryError('internal', `HTTP server cannot listen: ${error.message}`, {
            cause: error,
            retryable: false,
          }),
        );
      };
      this.#server.once('error', onError);
      this.#server.listen(this.#options.port, this.#options.host ?? '0.0.0.0', () => {
        this.#server.off('error', onError);
        this.#server.on('error', (error) => {
          this.#logger.error({ err: error }, 'HTTP server error.');
        });
        this.#port = (this.#server.address() as AddressInfo).port;
        this.#state = 'listening';
        this.#logger.info({ port: this.#port }, 'HTTP server listening.');
        resolve();
      });
    });
    return this.#starting;
  }

  /**
   * Stops accepting connections, lets open requests finish within `closeGraceMs`,
   * then closes what is left. Idempotent; resolves also when never started.
   */
  stop(): Promise<void> {
    if (this.#state === 'idle') {
      this.#state = 'stopped';
      return Promise.resolve();
    }
    this.#stopping ??= (async () => {
      await this.#starting?.catch(() => undefined);
      if (!this.#server.listening) {
        this.#state = 'stopped';
        return;
      }
      this.#state = 'stopping';
      const closed = new Promise<void>((resolve) => this.#server.close(() => resolve()));
      this.#server.closeIdleConnections();
      const grace = setTimeout(
        () => this.#server.closeAllConnections(),
        this.#options.closeGraceMs ?? 5_000,
      );
      await closed;
      clearTimeout(grace);
      this.#state = 'stopped';
      this.#logger.info('HTTP server stopped.');
    })();
    return this.#stopping;
  }

  /** The bound port (the real one when started on port 0); 0 before start(). */
  get port(): number {
    return this.#port;
  }

  /** `http://host:port` to reach the server; 127.0.0.1 when listening on every interface. */
  get url(): string {
    const host = this.#options.host ?? '0.0.0.0';
    const reachable = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host;
    return `http://${reachable.includes(':') ? `[${reachable}]` : reachable}:${this.#port}`;
  }

  async #dispatch(req: IncomingMessage, res: ServerResponse): Promise<void> {
    let segments: string[];
    let pathname: string;
    try {
      pathname = new URL(req.url ?? '/', 'http://ferry').pathname;
      segments = splitPath(pathname);
    } catch {
      sendText(res, 400, 'Bad Request\n');
      return;
    }
    const matches = this.#routes
      .map((route) => ({ route, params: matchSegments(route.segments, segments) }))
      .filter((match) => match.params !== undefined);
    if (matches.length === 0) {
      sendText(res, 404, 'Not Found\n');
      try {
        this.#options.onNotFound?.(pathname);
      } catch {
        // Counting must not fail the answer.
      }
      return;
    }
    const match = matches.find(({ route }) => route.method === req.method);
    if (match === undefined || match.params === undefined) {
      const allowed = [...new Set(matches.map(({ route }) => route.method))];
      res.setHeader('Allow', allowed.join(', '));
      sendText(res, 405, 'Method Not Allowed\n');
      return;
    }
    try {
      await match.route.handler(req, res, match.params);
    } catch (error: unknown) {
      // Never the path: a callback path carries the token.
      this.#logger.error(
        { err: error, method: req.method, route: match.route.pattern },
        'HTTP handler failed.',
      );
      if (!res.headersSent) sendText(res, 500, 'Internal Server Error\n');
      else res.destroy();
    }
  }
}

/** The raw answer to a request node:http could not parse or wait for any longer. */
function clientErrorAnswer(code: string | undefined): string {
  const status =
    code === 'HPE_HEADER_OVERFLOW'
      ? '431 Request Header Fields Too Large'
      : code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? '408 Request Timeout'
        : '400 Bad Request';
  return `HTTP/1.1 ${status}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`;
}

function splitPath(path: string): string[] {
  return path.split('/').filter((segment) => segment.length > 0);
}

function matchSegments(
  pattern: readonly string[],
  path: readonly string[],
): Record<string, string> | undefined {
  if (pattern.length !== path.length) return undefined;
  const params: Record<string, string> = {};
  for (const [index, expected] of pattern.entries()) {
    const actual = path[index] ?? '';
    if (expected.startsWith(':')) {
      try {
        params[expected.slice(1)] = decodeURIComponent(actual);
      } catch {
        return undefined;
      }
    } else if (expected !== actual) {
      return undefined;
    }
  }
  return params;
}

/** Writes a small text answer and ends the response. */
export function sendText(res: ServerResponse, status: number, text: string): void {
  res.writeHead(status, {
    'Content-Type': 'text/plain; charset=utf-8',
    'Content-Length': Buffer.byteLength(text),
  });
  res.end(text);
}

/** Writes a JSON answer and ends the response. */
export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = `${JSON.stringify(body)}\n`;
  res.writeHead(status, {
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': Buffer.byteLength(text),
  });
  res.end(text);
}
