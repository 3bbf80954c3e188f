/**
 * A kafkajs connection with nothing waiting to be sent sets no timer.
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

interface RequestQueueClass {
  prototype: { scheduleCheckPendingRequests: Schedule };
}

let original: Schedule | undefined;

/** kafkajs's own scheduling, as it was before the install (for the test that shows the timer loop). */
export function kafkajsSchedule(): Schedule | undefined {
  return original ?? loadRequestQueue()?.prototype.scheduleCheckPendingRequests;
}

function loadRequestQueue(): RequestQueueClass | undefined {
  try {
    const queue = require('kafkajs/src/network/requestQueue/index.js') as RequestQueueClass;
    return typeof queue.prototype?.scheduleCheckPendingRequests === 'function' ? queue : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Puts `scheduleOnlyWhilePending` under every kafkajs connection of the process (kafkajs
 * calls the method on its prototype). Idempotent; false when kafkajs is laid out
 * otherwise, and the tests say so.
 */
export function installIdleRequestQueue(): boolean {
  if (original) return true;
  const queue = loadRequestQueue();
  if (!queue) return false;
  original = queue.prototype.scheduleCheckPendingRequests;
  queue.prototype.scheduleCheckPendingRequests = scheduleOnlyWhilePending;
  return true;
}
