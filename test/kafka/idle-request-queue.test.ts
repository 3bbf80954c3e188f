/**
 * kafkajs's request queue spins a 1 ms timer on every connection, idle or not; with the
 * workaround in place a connection with nothing pending sets no timer, and one with
 * requests waiting still checks them again.
 */
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  kafkajsSchedule,
  type RequestQueueState,
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
