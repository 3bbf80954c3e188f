/**
 * One POST over Node's own HTTP client (`node:http` / `node:https` keep-alive agents):
 * the request written, the whole answer read, and — what the exactly-once logic needs to
 * know of a failure — whether the request can have left this process at all.
 *
 * Node's client was chosen over undici for ferry's few hundred envelopes a second: its
 * parser is the runtime's own, already in memory, where undici's pool brought about
 * 25 MiB of resident code of its own (docs/memory.md).
 */
import { Agent as HttpAgent, request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import type { Socket } from 'node:net';

export interface ExchangeTarget {
  readonly agent: HttpAgent;
  readonly secure: boolean;
  readonly hostname: string;
  readonly port: number;
  readonly path: string;
}

export interface ExchangeAnswer {
  readonly statusCode: number;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
}

/**
 * Sockets whose handshake completed (TCP for http, TLS for https). A request that waited
 * in its agent's queue is handed a socket that carried requests before without being
 * marked `reusedSocket`, and that socket's handshake event will never come again.
 */
const established = new WeakSet<Socket>();

/** Code of a failure that came before the connection existed: the request never left. */
export const NOT_CONNECTED = 'FERRY_GATEWAY_NOT_CONNECTED';

/**
 * The request failed before its connection was established (refused, unresolved, a TLS
 * handshake refused, or the timeout while connecting): nothing of it was written, so the
 * gateway cannot have acted on it. The original failure is the cause.
 */
export class NotConnectedError extends Error {
  readonly code = NOT_CONNECTED;
  constructor(cause: unknown) {
    super(cause instanceof Error ? cause.message : String(cause), { cause });
    this.name = 'NotConnectedError';
  }
}

/** An answer body longer than ferry will hold: the gateway may have acted, the answer is lost. */
export class AnswerTooLargeError extends Error {
  readonly code = 'FERRY_ANSWER_TOO_LARGE';
  constructor(limit: number) {
    super(`the gateway's answer is longer than ${limit} bytes`);
    this.name = 'AnswerTooLargeError';
  }
}

export function targetOf(url: URL, path: string, connections: number): ExchangeTarget {
  const secure = url.protocol === 'https:';
  const agentOptions = {
    keepAlive: true,
    maxSockets: connections,
    maxFreeSockets: connections,
    // Idle sockets are closed after this; a server's `Keep-Alive: timeout` hint shortens it.
    timeout: 30_000,
    scheduling: 'lifo' as const,
  };
  return {
    agent: secure ? new HttpsAgent(agentOptions) : new HttpAgent(agentOptions),
    secure,
    hostname: url.hostname.replace(/^\[(.*)\]$/, '$1'),
    port: url.port === '' ? (secure ? 443 : 80) : Number(url.port),
    path,
  };
}

/**
 * POSTs `body` and reads the whole answer. Rejects with `signal.reason` when the signal
 * fires (wrapped in NotConnectedError if no connection existed yet), with a
 * NotConnectedError for any failure before the connection, and with the socket's or
 * parser's own error otherwise.
 */
export function exchange(
  target: ExchangeTarget,
  body: string,
  signal: AbortSignal,
  maxAnswerBytes: number,
): Promise<ExchangeAnswer> {
  return new Promise((resolve, reject) => {
    let connected = false;
    let settled = false;
    let handshaking: { socket: Socket; event: string } | undefined;
    const onHandshake = () => {
      connected = true;
      if (handshaking) established.add(handshaking.socket);
      handshaking = undefined;
    };
    const stopWatching = () => {
      handshaking?.socket.removeListener(handshaking.event, onHandshake);
      handshaking = undefined;
    };
    const fail = (error: unknown) => {
      if (settled) return;
      settled = true;
      signal.removeEventListener('abort', onAbort);
      stopWatching();
      reject(connected ? error : new NotConnectedError(error));
    };
    const send = target.secure ? httpsRequest : httpRequest;
    const request = send({
      agent: target.agent,
      hostname: target.hostname,
      port: target.port,
      path: target.path,
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'content-length': Buffer.byteLength(body),
      },
    });
    function onAbort() {
      fail(signal.reason);
      request.destroy();
    }
    if (signal.aborted) {
      onAbort();
      return;
    }
    signal.addEventListener('abort', onAbort, { once: true });
    request.on('socket', (socket: Socket) => {
      // A socket that carried a request before is connected already; a new one is once its
      // handshake is done (TCP for http, TLS for https): only then are the request's bytes
      // written.
      if (request.reusedSocket || established.has(socket)) {
        connected = true;
      } else if (!target.secure && !socket.connecting) {
        connected = true;
        established.add(socket);
      } else {
        handshaking = { socket, event: target.secure ? 'secureConnect' : 'connect' };
        socket.once(handshaking.event, onHandshake);
      }
    });
    request.on('error', fail);
    request.on('response', (response) => {
      const chunks: Buffer[] = [];
      let length = 0;
      response.on('data', (chunk: Buffer) => {
        length += chunk.length;
        if (length > maxAnswerBytes) {
          fail(new AnswerTooLargeError(maxAnswerBytes));
          request.destroy();
          return;
        }
        chunks.push(chunk);
      });
      response.on('error', fail);
      response.on('aborted', () =>
        fail(Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' })),
      );
      response.on('end', () => {
        if (settled) return;
        settled = true;
        signal.removeEventListener('abort', onAbort);
        stopWatching();
        resolve({
          statusCode: response.statusCode ?? 0,
          headers: response.headers,
          body: Buffer.concat(chunks, length).toString('utf8'),
        });
      });
    });
    request.end(body);
  });
}
