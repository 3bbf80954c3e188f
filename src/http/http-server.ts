/**
 * An HTTP server of ferry's: the daemon runs one per audience (README, HTTP, metrics and
 * logs), the callback route on FERRY_HTTP_PORT and `/metrics` and the health probes on
 * FERRY_OPS_PORT, so that no load on the public route can fail a probe. A tiny router over
 * node:http: exact segments and `:name` parameters, 404 for an unknown path, 405 with `Allow`
 * for a known path and another method (unless the route hides itself), 500 when a handler
 * throws, without stopping the server: bad input never stops the flow (README, Guarantees 3).
 * Connections are bounded per port and per client, and slow clients are cut on time. An
 * answer given before the request's body arrived reaches its sender (early-answer.ts).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { FerryError } from '../errors.ts';
import type { Logger } from '../observability/logger.ts';
import { ClientConnections } from './client-connections.ts';
import {
  answerEarly,
  bodyStillArriving,
  DEFAULT_DISCARD_BOUNDS,
  type DiscardBounds,
  isDiscarding,
  setDiscardBounds,
  type UnreadBody,
} from './early-answer.ts';

/** Handles one request; `params` holds the `:name` segments of the route, URL-decoded. */
export type RouteHandler = (
  req: IncomingMessage,
  res: ServerResponse,
  params: Record<string, string>,
) => void | Promise<void>;

export type HttpMethod = 'GET' | 'POST';

/**
 * Why a connection was closed at accept: its client already held
 * `maxConnectionsPerClient`, or the port held `maxConnections`.
 */
export type ConnectionRefusal = 'per_client' | 'global';

/** Settings of one route. */
export interface RouteOptions {
  /**
   * For a path that carries a secret (a token segment): a request on the path with another
   * method gets 405 only when this returns true for its parameters, else the 404 of an
   * unknown path, so the route does not show itself to whoever lacks the secret.
   */
  readonly visibleTo?: (params: Record<string, string>) => boolean;
}

/** Settings for {@link HttpServer}. */
export interface HttpServerOptions {
  /** Which of ferry's servers this is (`http`, `ops`): in its log lines. Default `http`. */
  readonly name?: string;
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
  /**
   * A connection with no traffic either way for this long while a request is on it is
   * closed, ms: a client that asks for answers and stops reading them (pipelined requests
   * for `/metrics`) would otherwise hold its connection for good, as no other timeout covers
   * an answer stuck in the send buffer. Above the longest a handler waits (a callback waits
   * up to 10 s for Kafka). Default 30000.
   */
  readonly idleTimeoutMs?: number;
  /** Connections held at once; past it new ones are closed at accept. Default 1024. */
  readonly maxConnections?: number;
  /**
   * Connections one client (IPv4 address, IPv6 /64) holds at once; past it its new ones are
   * closed at accept, so one client cannot take every connection. 0: no per-client cap.
   * Default 64.
   */
  readonly maxConnectionsPerClient?: number;
  /**
   * How often open connections are checked against the headers and request timeouts, ms.
   * node checks only then (its default is 30000), so a client sending its headers slowly
   * keeps its connection until the check after the timeout. Default 1000.
   */
  readonly connectionsCheckingIntervalMs?: number;
  /**
   * Connections the kernel completes and queues for the server to accept (capped by the
   * kernel's somaxconn). While one client floods the port, ferry accepts and resets its
   * connections one by one; once the queue is full the kernel drops new connections'
   * handshakes, everyone's alike, and a dropped SYN costs a client 1 s, then 3 s more.
   * Default 2048: room for twice the default connection cap queued at once (node's is 511).
   */
  readonly listenBacklog?: number;
  /** Hears of every connection closed at accept and why, e.g. to count them. */
  readonly onConnectionRefused?: (reason: ConnectionRefusal) => void;
  /** Largest request head (request line and headers), bytes; past it 431. Default 16384. */
  readonly maxHeaderBytes?: number;
  /** Hears of every request answered 404 for an unknown path (its path), e.g. to count them. */
  readonly onNotFound?: (pathname: string) => void;
  /** How long stop() lets open requests finish before closing their sockets, ms. Default 5000. */
  readonly closeGraceMs?: number;
  /**
   * How much of a body still arriving after its answer (a 404, a 413) is read and dropped
   * before the connection closes, so the sender sees the answer (early-answer.ts). Default
   * 64 MiB and 5 s.
   */
  readonly discardBounds?: DiscardBounds;
}

interface Route {
  readonly method: HttpMethod;
  readonly pattern: string;
  readonly segments: readonly string[];
  readonly handler: RouteHandler;
  readonly visibleTo: ((params: Record<string, string>) => boolean) | undefined;
}

const DEFAULT_MAX_CONNECTIONS_PER_CLIENT = 64;
const DEFAULT_CONNECTIONS_CHECKING_INTERVAL_MS = 1_000;
const DEFAULT_LISTEN_BACKLOG = 2_048;
const DEFAULT_IDLE_TIMEOUT_MS = 30_000;
/** How long a client answered 400 or 431 has to read the answer and close, ms. */
const CLIENT_ERROR_LINGER_MS = 1_000;

type State = 'idle' | 'starting' | 'listening' | 'stopping' | 'stopped';

/** A started-and-stopped HTTP server with a small router. */
export class HttpServer {
  readonly #options: HttpServerOptions;
  readonly #logger: Logger;
  readonly #routes: Route[] = [];
  readonly #server: Server;
  readonly #perClient: ClientConnections | undefined;
  #state: State = 'idle';
  #port = 0;
  #starting: Promise<void> | undefined;
  #stopping: Promise<void> | undefined;

  constructor(options: HttpServerOptions) {
    this.#options = options;
    this.#logger = options.logger.child({ component: 'http', listener: options.name ?? 'http' });
    const requestTimeout = options.requestTimeoutMs ?? 30_000;
    const headersTimeout = Math.min(options.headersTimeoutMs ?? 10_000, requestTimeout);
    this.#server = createServer(
      {
        requestTimeout,
        headersTimeout,
        // Never longer than the headers timeout itself: the timeouts then hold to within
        // one interval instead of node's default 30 s.
        connectionsCheckingInterval: Math.min(
          options.connectionsCheckingIntervalMs ?? DEFAULT_CONNECTIONS_CHECKING_INTERVAL_MS,
          headersTimeout,
        ),
        keepAliveTimeout: options.keepAliveTimeoutMs ?? 5_000,
        maxHeaderSize: options.maxHeaderBytes ?? 16 * 1024,
      },
      (req, res) => {
        setDiscardBounds(req, options.discardBounds ?? DEFAULT_DISCARD_BOUNDS);
        void this.#dispatch(req, res);
      },
    );
    // A flood of connections (or slow clients holding them) must not exhaust file
    // descriptors that Kafka and the gateway connections need. node closes the ones past
    // the cap before they reach the server and reports each as `drop`.
    this.#server.maxConnections = options.maxConnections ?? 1024;
    // node destroys a socket whose timeout fires when nobody listens for `timeout`.
    this.#server.timeout = options.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS;
    this.#server.on('drop', () => this.#refused('global'));
    const perClient = options.maxConnectionsPerClient ?? DEFAULT_MAX_CONNECTIONS_PER_CLIENT;
    this.#perClient = perClient > 0 ? new ClientConnections(perClient) : undefined;
    const limit = this.#perClient;
    if (limit) {
      // After node's own `connection` listener: the socket is the server's already, so
      // destroying it runs the server's cleanup as for any closed connection.
      this.#server.on('connection', (socket: Socket) => this.#admit(limit, socket));
    }
    this.#server.on('clientError', (error: NodeJS.ErrnoException, socket) => {
      // Malformed requests and timeouts: answer when we still can, never crash.
      this.#logger.debug({ err: error }, 'Bad HTTP request from a client.');
      // A connection dropping a body after its answer has had its answer: a 408 or 400
      // written now would follow it as garbage, so it is only closed.
      if (!socket.writable || isDiscarding(socket as Socket)) {
        socket.destroy();
        return;
      }
      // end() only half-closes: the connection would stay until the client closes its side,
      // which a client that never reads never does, holding its place for good. A client too
      // slow to send its request loses it once the answer is out; one whose request was
      // malformed or too large gets a moment to read why.
      const timedOut = error.code === 'ERR_HTTP_REQUEST_TIMEOUT';
      socket.end(clientErrorAnswer(error.code), () => {
        if (timedOut) socket.destroy();
      });
      if (!timedOut) setTimeout(() => socket.destroy(), CLIENT_ERROR_LINGER_MS).unref();
    });
  }

  /**
   * Adds a route. Patterns are absolute paths whose segments are literals or
   * `:name` parameters, e.g. `/callbacks/:token`. Literal routes added earlier win.
   *
   * @throws FerryError `illegal_state` after start(), or when the same method and pattern exist.
   */
  route(
    method: HttpMethod,
    pattern: string,
    handler: RouteHandler,
    options: RouteOptions = {},
  ): void {
    if (this.#state !== 'idle') {
      throw new FerryError('illegal_state', 'routes must be added before the HTTP server starts');
    }
    if (!pattern.startsWith('/')) {
      throw new FerryError('internal', `route pattern must start with "/": ${pattern}`);
    }
    if (this.#routes.some((route) => route.method === method && route.pattern === pattern)) {
      throw new FerryError('illegal_state', `route ${method} ${pattern} is already registered`);
    }
    this.#routes.push({
      method,
      pattern,
      segments: splitPath(pattern),
      handler,
      visibleTo: options.visibleTo,
    });
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
      const listening = {
        port: this.#options.port,
        host: this.#options.host ?? '0.0.0.0',
        backlog: this.#options.listenBacklog ?? DEFAULT_LISTEN_BACKLOG,
      };
      this.#server.listen(listening, () => {
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

  /**
   * Connections the client of `address` holds now, as the per-client cap counts them
   * (undefined without a per-client cap): what a flood test watches.
   */
  connectionsOf(address: string): number | undefined {
    return this.#perClient?.heldBy(address);
  }

  /** `http://host:port` to reach the server; 127.0.0.1 when listening on every interface. */
  get url(): string {
    const host = this.#options.host ?? '0.0.0.0';
    const reachable = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host;
    return `http://${reachable.includes(':') ? `[${reachable}]` : reachable}:${this.#port}`;
  }

  /** Closes a new connection whose client already holds its share; counts the rest until they close. */
  #admit(limit: ClientConnections, socket: Socket): void {
    const address = socket.remoteAddress;
    if (address === undefined) {
      // Gone before it was handed over: nothing to count or refuse.
      socket.destroy();
      return;
    }
    const release = limit.admit(address);
    if (release === undefined) {
      // A reset rather than a close: the client learns at once, and no TIME_WAIT is left
      // here for each connection of a client that keeps reconnecting.
      socket.resetAndDestroy();
      this.#refused('per_client');
      return;
    }
    socket.once('close', release);
  }

  #refused(reason: ConnectionRefusal): void {
    try {
      this.#options.onConnectionRefused?.(reason);
    } catch {
      // Counting must not fail the server.
    }
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
      sendNotFound(res);
      try {
        this.#options.onNotFound?.(pathname);
      } catch {
        // Counting must not fail the answer.
      }
      return;
    }
    const match = matches.find(({ route }) => route.method === req.method);
    if (match === undefined || match.params === undefined) {
      const shown = matches.filter(({ route, params }) => isVisible(route, params ?? {}));
      if (shown.length === 0) {
        // The route hides itself: the answer of an unknown path, to the byte. Not counted as
        // a missed path either: the path was right, the method and the secret were not.
        sendNotFound(res);
        return;
      }
      const allowed = [...new Set(shown.map(({ route }) => route.method))];
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

/** Whether a route shows itself (405 with Allow) to a request with `params` and another method. */
function isVisible(route: Route, params: Record<string, string>): boolean {
  if (route.visibleTo === undefined) return true;
  try {
    return route.visibleTo(params);
  } catch {
    return false;
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

/**
 * Answers 404 and closes the connection: a client probing paths pays a new connection for
 * each. A body sent with the request is read and dropped within the server's bounds before
 * the close, so its sender sees the 404 instead of a broken pipe. Every 404 of ferry's is
 * this one, so an unknown path and a hidden route cannot be told apart.
 */
export function sendNotFound(res: ServerResponse): void {
  res.setHeader('Connection', 'close');
  sendText(res, 404, 'Not Found\n');
}

/**
 * Writes a small text answer and ends the response. To a request whose body is still
 * arriving, the answer closes the connection, after the rest of the body was read and
 * dropped within the server's bounds (`unread: 'discard'`) or at once (`'close'`).
 */
export function sendText(
  res: ServerResponse,
  status: number,
  text: string,
  unread: UnreadBody = 'discard',
): void {
  send(res, status, 'text/plain; charset=utf-8', text, unread);
}

/** Writes a JSON answer and ends the response; a body still arriving as for {@link sendText}. */
export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  unread: UnreadBody = 'discard',
): void {
  send(res, status, 'application/json; charset=utf-8', `${JSON.stringify(body)}\n`, unread);
}

function send(
  res: ServerResponse,
  status: number,
  contentType: string,
  text: string,
  unread: UnreadBody,
): void {
  const headers = { 'Content-Type': contentType, 'Content-Length': Buffer.byteLength(text) };
  if (bodyStillArriving(res.req)) {
    answerEarly(res, status, headers, text, unread);
    return;
  }
  res.writeHead(status, headers);
  res.end(text);
}
