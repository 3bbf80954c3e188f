/**
 * Answering a request whose body is still arriving (a 404, a 413, a 503 while stopping).
 * Closing the connection right after such an answer leaves the rest of the body unread, and
 * closing a socket with unread bytes makes the kernel send a reset: a client still writing
 * its body gets a broken pipe, and one that reads nothing before its body is out (Python's
 * http.client) never sees the answer at all. A gateway that sees a broken connection instead
 * of an answer retries the same request. So the answer goes out first, whole (its
 * Content-Length is met), then the rest of the body is read and dropped, and only then is the
 * connection closed; a body longer or slower than the bounds is cut anyway, so a client
 * cannot hold a connection longer than the bounds by sending after its answer.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

/** How much of an unread body is read and dropped after an early answer. */
export interface DiscardBounds {
  /** Bytes read after the answer at most; a body declared longer is not read at all. */
  readonly maxBytes: number;
  /** Time after the answer at most, ms. */
  readonly timeoutMs: number;
}

/**
 * 64 MiB: a thousand times the callback route's body limit, and well past any body a client
 * posts by mistake, while a byte counter is all it costs (nothing is kept). 5 s: a body
 * that has not come within that after the answer is a slow client, not a lost answer.
 */
export const DEFAULT_DISCARD_BOUNDS: DiscardBounds = {
  maxBytes: 64 * 1024 * 1024,
  timeoutMs: 5_000,
};

/** What becomes of a body still arriving when the answer is written. */
export type UnreadBody =
  /** read and dropped within the bounds, then the connection closes */
  | 'discard'
  /** the connection closes right after the answer (a sender already too slow gets no more time) */
  | 'close';

const boundsOf = new WeakMap<IncomingMessage, DiscardBounds>();
const discarding = new WeakSet<Socket>();

/** Sets the bounds for the early answers to `req` (the server's own, else the defaults). */
export function setDiscardBounds(req: IncomingMessage, bounds: DiscardBounds): void {
  boundsOf.set(req, bounds);
}

/**
 * Whether the connection of `socket` is reading and dropping a body after its answer: the
 * answer is out, so nothing more may be written on it, not even a timeout's 408.
 */
export function isDiscarding(socket: Socket): boolean {
  return discarding.has(socket);
}

/**
 * Whether some of `req`'s body has not arrived yet. A request without a body is not complete
 * either while its handler runs (node emits it before the parser ends it), so the headers say.
 */
export function bodyStillArriving(req: IncomingMessage): boolean {
  if (req.complete) return false;
  if (req.headers['transfer-encoding'] !== undefined) return true;
  return Number(req.headers['content-length'] ?? 0) !== 0;
}

/**
 * Writes a whole answer with `Connection: close` to a request whose body is still arriving,
 * then, per `unread`, reads and drops the rest of the body within the request's bounds
 * before ending the response (node then closes the connection), or ends it at once.
 */
export function answerEarly(
  res: ServerResponse,
  status: number,
  headers: Record<string, string | number>,
  body: string,
  unread: UnreadBody,
): void {
  res.setHeader('Connection', 'close');
  res.writeHead(status, headers);
  const req = res.req;
  const bounds = boundsOf.get(req) ?? DEFAULT_DISCARD_BOUNDS;
  const declared = Number(req.headers['content-length']);
  if (unread === 'close' || (Number.isSafeInteger(declared) && declared > bounds.maxBytes)) {
    // Past the bounds before a byte is read: reading it would only delay the same close.
    res.end(body);
    return;
  }
  // The answer goes out now, whole: `end` comes once the body is read, since node closes
  // the connection (and the kernel resets it over unread bytes) as soon as the answer ends.
  res.write(body);
  discardThenEnd(req, res, bounds);
}

function discardThenEnd(req: IncomingMessage, res: ServerResponse, bounds: DiscardBounds): void {
  const socket = req.socket;
  discarding.add(socket);
  let dropped = 0;
  const finish = (withinBounds: boolean): void => {
    clearTimeout(timer);
    req.off('data', onData);
    req.off('end', onEnd);
    req.off('error', onGone);
    req.off('close', onGone);
    discarding.delete(socket);
    res.end();
    // Past a bound, the rest of the body is not waited for: the close resets the connection.
    if (!withinBounds) socket.destroy();
  };
  const onData = (chunk: Buffer): void => {
    dropped += chunk.length;
    if (dropped > bounds.maxBytes) finish(false);
  };
  const onEnd = (): void => finish(true);
  const onGone = (): void => finish(false);
  const timer = setTimeout(() => finish(false), bounds.timeoutMs);
  timer.unref();
  req.on('data', onData);
  req.on('end', onEnd);
  req.on('error', onGone);
  req.on('close', onGone);
  // A reader that stopped at its limit paused the request: node reads the socket again.
  req.resume();
}
