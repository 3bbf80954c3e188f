/**
 * kafkajs's request queue spins a 1 ms timer on every connection, idle or not; with the
 * workaround in place a connection with nothing pending sets no timer, and one with
 * requests waiting still checks them again. kafkajs also runs a 100 ms interval per
 * connection for request timeouts; here each request in flight has a timer of its own,
 * and a broker that never answers still times the request out.
 */
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { createServer, type Socket } from 'node:net';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  armRequestTimeout,
  disarmRequestTimeout,
  kafkajsSchedule,
  kafkajsTimeoutCheck,
  type RequestQueueState,
  type SocketRequestState,
  scheduleOnlyWhilePending,
} from '../../src/kafka/idle-request-queue.ts';
import { Kafka, logLevel } from '../../src/kafka/kafkajs.ts';
import { testBrokers } from '../helpers/kafka.ts';

const require = createRequire(import.meta.url);

/** A queue as kafkajs's scheduling sees it: a check that schedules the next one, as kafkajs's does. */
function fakeQueue(schedule: (this: RequestQueueState) => void, pending: unknown[] = []) {
  const queue = {
    pending,
    throttledUntil: -1,
    throttleCheckTimeoutId: null as NodeJS.Timeout | null,
    checks: 0,
    checkPendingRequests() {
      queue.checks += 1;
      schedule.call(queue);
    },
  };
  return queue;
}

test('kafkajs alone re-checks an idle queue every millisecond, for ever', async () => {
  const original = kafkajsSchedule();
  assert.ok(original, 'kafkajs has the request queue this works around');
  const queue = fakeQueue(original);
  original.call(queue);
  await sleep(100);
  const timer = queue.throttleCheckTimeoutId;
  if (timer) clearTimeout(timer);
  assert.ok(queue.checks > 20, `${queue.checks} checks of an empty queue in 100 ms`);
});

test('with nothing pending no check is scheduled; with requests pending one is', async () => {
  const idle = fakeQueue(scheduleOnlyWhilePending);
  scheduleOnlyWhilePending.call(idle);
  assert.equal(idle.throttleCheckTimeoutId, null);
  await sleep(50);
  assert.equal(idle.checks, 0);

  const waiting = fakeQueue(scheduleOnlyWhilePending, ['a request']);
  waiting.throttledUntil = Date.now() + 30;
  scheduleOnlyWhilePending.call(waiting);
  assert.notEqual(waiting.throttleCheckTimeoutId, null);
  await sleep(15);
  assert.equal(waiting.checks, 0, 'not before the throttle ends');
  await sleep(60);
  assert.ok(waiting.checks >= 1, 'checked once the throttle ended');
  // Still pending (nothing here sends it): kafkajs's 10 ms re-check goes on.
  const timer = waiting.throttleCheckTimeoutId as NodeJS.Timeout | null;
  if (timer) clearTimeout(timer);
});

test('an idle connection to the real broker runs no checks between requests', async (t) => {
  const queueClass = require('kafkajs/src/network/requestQueue/index.js') as {
    prototype: { checkPendingRequests: () => void };
  };
  const check = queueClass.prototype.checkPendingRequests;
  let checks = 0;
  queueClass.prototype.checkPendingRequests = function (this: unknown) {
    checks += 1;
    check.call(this);
  };
  t.after(() => {
    queueClass.prototype.checkPendingRequests = check;
  });
  const admin = new Kafka({
    clientId: 'idle-queue-test',
    brokers: testBrokers(),
    logLevel: logLevel.NOTHING,
  }).admin();
  await admin.connect();
  t.after(() => admin.disconnect());
  await admin.listTopics();
  const before = checks;
  await sleep(500);
  // kafkajs alone: about 500 (one per millisecond); here none, nothing was asked.
  assert.ok(checks - before < 5, `${checks - before} checks in 500 ms idle`);
  await admin.listTopics();
  assert.ok(checks > before, 'an answer still checks what is pending');
});

/** A request as the timeout timers see it, counting how it ended. */
function fakeRequest(correlationId: number, requestTimeout: number) {
  const request = {
    correlationId,
    requestTimeout,
    timeouts: 0,
    timeoutRequest() {
      request.timeouts += 1;
    },
    completed() {
      disarmRequestTimeout(request);
    },
    rejected() {
      disarmRequestTimeout(request);
    },
  } satisfies SocketRequestState & { timeouts: number };
  return request;
}

test('kafkajs alone starts a 100 ms timeout interval on every connection at connect', () => {
  const start = kafkajsTimeoutCheck();
  assert.ok(start, 'kafkajs has the timeout check this replaces');
  const queue = {
    enforceRequestTimeout: true,
    requestTimeout: 30_000,
    requestTimeoutIntervalId: undefined as NodeJS.Timeout | undefined,
    throttleCheckTimeoutId: null,
    inflight: new Map(),
    isConnected: () => true,
    destroy() {
      clearInterval(queue.requestTimeoutIntervalId);
    },
  };
  start.call(queue);
  // Nothing is in flight, yet the interval runs until the connection is closed.
  assert.ok(queue.requestTimeoutIntervalId, 'an interval per connected connection');
  clearInterval(queue.requestTimeoutIntervalId);
});

test('a request in flight past its timeout is timed out once; an answered one never', async () => {
  const late = fakeRequest(1, 20);
  const answered = fakeRequest(2, 20);
  const inflight = new Map<number, SocketRequestState>([
    [1, late],
    [2, answered],
  ]);
  const queue = { enforceRequestTimeout: true, inflight };
  armRequestTimeout(queue, late);
  armRequestTimeout(queue, answered);
  answered.completed();
  inflight.delete(2);
  await sleep(60);
  assert.equal(late.timeouts, 1);
  assert.equal(answered.timeouts, 0);

  // A connection that does not enforce timeouts, or a request no longer in flight: no timer.
  const unenforced = fakeRequest(3, 1);
  armRequestTimeout(
    { enforceRequestTimeout: false, inflight: new Map([[3, unenforced]]) },
    unenforced,
  );
  const gone = fakeRequest(4, 1);
  armRequestTimeout({ enforceRequestTimeout: true, inflight: new Map() }, gone);
  // A timeout past what Node's timers hold (kafkajs's "never"): no timer, not one of 1 ms.
  const endless = fakeRequest(5, Number.MAX_SAFE_INTEGER);
  armRequestTimeout({ enforceRequestTimeout: true, inflight: new Map([[5, endless]]) }, endless);
  await sleep(20);
  assert.equal(unenforced.timeouts + gone.timeouts + endless.timeouts, 0);
});

test('a broker that accepts the connection and never answers: the request still times out', async (t) => {
  const sockets: Socket[] = [];
  const silent = createServer((socket) => {
    // Reads everything, answers nothing: a broker frozen after accepting.
    sockets.push(socket);
    socket.resume();
  });
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
  t.after(() => {
    for (const socket of sockets) socket.destroy();
    silent.close();
  });
  const address = silent.address();
  assert.ok(address && typeof address === 'object');
  const admin = new Kafka({
    clientId: 'silent-broker-test',
    brokers: [`127.0.0.1:${address.port}`],
    requestTimeout: 300,
    connectionTimeout: 1_000,
    retry: { retries: 0 },
    logLevel: logLevel.NOTHING,
  }).admin();
  const began = performance.now();
  await assert.rejects(admin.connect(), /timed out/i);
  const tookMs = performance.now() - began;
  // kafkajs gives the ApiVersions request of a connect the connection timeout (1 s).
  assert.ok(tookMs >= 990 && tookMs < 3_000, `timed out after ${Math.round(tookMs)} ms`);
  await admin.disconnect();
});

test('a connected, idle client holds no timer of its own', async (t) => {
  const timers = () => process.getActiveResourcesInfo().filter((kind) => kind === 'Timeout').length;
  const admin = new Kafka({
    clientId: 'idle-timers-test',
    brokers: testBrokers(),
    logLevel: logLevel.NOTHING,
  }).admin();
  const before = timers();
  await admin.connect();
  t.after(() => admin.disconnect());
  await admin.listTopics();
  await sleep(50);
  // kafkajs alone: one 100 ms interval per connection opened (here at least the seed
  // broker's and the controller's), for as long as they stay connected.
  assert.equal(timers() - before, 0, 'no timer left once every request was answered');
});
