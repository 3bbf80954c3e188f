/**
 * A kafkajs connection with nothing waiting to be sent sets no timer, and one with nothing
 * in flight wakes nothing.
 *
 * kafkajs's request queue re-checks its pending requests on a timer: after every answer
 * it schedules a check at `throttledUntil - now`, even when nothing is pending and the
 * broker throttles nothing. `throttledUntil` is then in the past, so the timer fires at
 * once (Node clamps a negative delay to 1 ms, and since Node 24 warns about it), the
 * check finds nothing, and schedules itself again: every connection of the process
 * spins a 1 ms timer for as long as it lives, idle or not. ferry holds many connections
 * (a consumer per lane, a transactional producer per partition, admin clients), so an
 * idle replica burned CPU on these timers alone. The check is only ever needed while
 * requests wait (throttled, or past the in-flight limit); kafkajs checks again on every
 * answer and every new request anyway. Here a check with nothing pending schedules
 * nothing; with requests pending it schedules as kafkajs does.
 *
 * Second, each connection enforces its requests' timeouts with an interval of 100 ms that
 * runs from connect to disconnect, looking for in-flight requests older than their
 * timeout. ferry's dozen connections (a transactional producer per partition, consumers,
 * admin) woke an idle replica about 125 times a second for these checks; on a virtual
 * machine each wake-up of an idle process costs 140–220 µs of accounted CPU. Here each
 * request sent gets a timer of its own, due when kafkajs would have found it late, and
 * cleared when it is answered or rejected: the same timeout, and no wake-up unless a
 * request is actually late.
 */
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

/** kafkajs's interval for re-checking pending requests that are not throttled (requestQueue/index.js). */
const CHECK_PENDING_REQUESTS_INTERVAL_MS = 10;

/** The fields of kafkajs's RequestQueue that its scheduling reads and writes. */
export interface RequestQueueState {
  pending: readonly unknown[];
  throttledUntil: number;
  throttleCheckTimeoutId: NodeJS.Timeout | null;
  checkPendingRequests(): void;
}

type Schedule = (this: RequestQueueState) => void;

/** kafkajs's scheduling, with no timer while nothing is pending. */
export function scheduleOnlyWhilePending(this: RequestQueueState): void {
  if (this.throttleCheckTimeoutId || this.pending.length === 0) return;
  const throttledFor = this.throttledUntil - Date.now();
  const delay = throttledFor > 0 ? throttledFor : CHECK_PENDING_REQUESTS_INTERVAL_MS;
  this.throttleCheckTimeoutId = setTimeout(() => {
    this.throttleCheckTimeoutId = null;
    this.checkPendingRequests();
  }, delay);
}

/** The parts of kafkajs's SocketRequest (one request on a connection) used here. */
export interface SocketRequestState {
  readonly correlationId: number;
  readonly requestTimeout: number;
  timeoutRequest(): void;
  completed(response: unknown): void;
  rejected(error: unknown): void;
}

/** The fields of kafkajs's RequestQueue that its timeout enforcement reads. */
export interface TimeoutQueueState {
  readonly enforceRequestTimeout: boolean;
  readonly inflight: ReadonlyMap<number, SocketRequestState>;
}

/** The longest delay Node's timers take as given (a signed 32-bit count of milliseconds). */
const MAX_TIMER_DELAY_MS = 2 ** 31 - 1;

/** Where a request's own timeout timer is kept, on kafkajs's SocketRequest. */
const TIMEOUT_TIMER = Symbol('ferry:requestTimeoutTimer');
type TimedRequest = SocketRequestState & { [TIMEOUT_TIMER]?: NodeJS.Timeout | undefined };

/**
 * Arms the timer of a request just sent, unless it was answered at once (no answer
 * expected) or the connection does not enforce timeouts. kafkajs's interval times a
 * request out at its first check past `requestTimeout` after sending, at most 100 ms
 * later; this timer fires 1 ms past it.
 */
export function armRequestTimeout(queue: TimeoutQueueState, request: SocketRequestState): void {
  if (!queue.enforceRequestTimeout || queue.inflight.get(request.correlationId) !== request) {
    return;
  }
  // Node fires a longer delay after 1 ms; kafkajs documents Number.MAX_SAFE_INTEGER as a
  // session timeout (its JoinGroup waits that long), which its interval never reached.
  if (request.requestTimeout + 1 > MAX_TIMER_DELAY_MS) return;
  (request as TimedRequest)[TIMEOUT_TIMER] = setTimeout(() => {
    (request as TimedRequest)[TIMEOUT_TIMER] = undefined;
    if (queue.inflight.get(request.correlationId) === request) request.timeoutRequest();
  }, request.requestTimeout + 1);
}

/** Clears a request's timer once it is answered, rejected or timed out. */
export function disarmRequestTimeout(request: SocketRequestState): void {
  const timer = (request as TimedRequest)[TIMEOUT_TIMER];
  if (timer !== undefined) {
    clearTimeout(timer);
    (request as TimedRequest)[TIMEOUT_TIMER] = undefined;
  }
}

interface RequestQueueClass {
  prototype: {
    scheduleCheckPendingRequests: Schedule;
    scheduleRequestTimeoutCheck: (this: unknown) => void;
    sendSocketRequest: (this: TimeoutQueueState, request: SocketRequestState) => void;
  };
}

interface SocketRequestClass {
  prototype: {
    completed: (this: SocketRequestState, response: unknown) => void;
    rejected: (this: SocketRequestState, error: unknown) => void;
  };
}

let original: Schedule | undefined;
/** kafkajs's own start of the 100 ms interval, kept for the test that shows it. */
let originalTimeoutCheck: ((this: unknown) => void) | undefined;

/** kafkajs's own scheduling, as it was before the install (for the test that shows the timer loop). */
export function kafkajsSchedule(): Schedule | undefined {
  return original ?? loadRequestQueue()?.prototype.scheduleCheckPendingRequests;
}

/** kafkajs's own start of the per-connection timeout interval (for the test that shows it). */
export function kafkajsTimeoutCheck(): ((this: unknown) => void) | undefined {
  return originalTimeoutCheck ?? loadRequestQueue()?.prototype.scheduleRequestTimeoutCheck;
}

function loadRequestQueue(): RequestQueueClass | undefined {
  try {
    const queue = require('kafkajs/src/network/requestQueue/index.js') as RequestQueueClass;
    const { prototype } = queue;
    return typeof prototype?.scheduleCheckPendingRequests === 'function' &&
      typeof prototype.scheduleRequestTimeoutCheck === 'function' &&
      typeof prototype.sendSocketRequest === 'function'
      ? queue
      : undefined;
  } catch {
    return undefined;
  }
}

function loadSocketRequest(): SocketRequestClass | undefined {
  try {
    const request =
      require('kafkajs/src/network/requestQueue/socketRequest.js') as SocketRequestClass;
    return typeof request.prototype?.completed === 'function' &&
      typeof request.prototype.rejected === 'function'
      ? request
      : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Puts `scheduleOnlyWhilePending` and the per-request timeout timers under every kafkajs
 * connection of the process (kafkajs calls these methods on their prototypes).
 * Idempotent; false when kafkajs is laid out otherwise, and the tests say so.
 */
export function installIdleRequestQueue(): boolean {
  if (original) return true;
  const queue = loadRequestQueue();
  const socketRequest = loadSocketRequest();
  if (!queue || !socketRequest) return false;
  const { prototype } = queue;
  original = prototype.scheduleCheckPendingRequests;
  prototype.scheduleCheckPendingRequests = scheduleOnlyWhilePending;
  originalTimeoutCheck = prototype.scheduleRequestTimeoutCheck;
  // Called at connect to start the interval: nothing to start, each request times itself.
  prototype.scheduleRequestTimeoutCheck = () => undefined;
  const send = prototype.sendSocketRequest;
  prototype.sendSocketRequest = function (this: TimeoutQueueState, request: SocketRequestState) {
    try {
      send.call(this, request);
    } finally {
      // Also when the write threw after the request was put in flight: it times out then.
      armRequestTimeout(this, request);
    }
  };
  const { completed, rejected } = socketRequest.prototype;
  socketRequest.prototype.completed = function (this: SocketRequestState, response: unknown) {
    disarmRequestTimeout(this);
    completed.call(this, response);
  };
  // Also the end of a timed-out request: kafkajs's timeoutRequest rejects it.
  socketRequest.prototype.rejected = function (this: SocketRequestState, error: unknown) {
    disarmRequestTimeout(this);
    rejected.call(this, error);
  };
  return true;
}
