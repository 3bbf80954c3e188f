/**
 * A heartbeat that cannot reach its group coordinator makes kafkajs join again (which
 * looks the coordinator up afresh) instead of retrying the dead node for a minute.
 */
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { test } from 'node:test';
import {
  coordinatorLossRejoinInstalled,
  forgetHeartbeats,
  lastHeartbeatFailure,
  rejoiningHeartbeat,
} from '../../src/kafka/coordinator-loss.ts';
import '../../src/kafka/kafkajs.ts';

const require = createRequire(import.meta.url);
const { isRebalancing, KafkaJSConnectionError, KafkaJSProtocolError, isKafkaJSError } =
  require('kafkajs/src/errors.js') as {
    isRebalancing: (error: unknown) => boolean;
    isKafkaJSError: (error: unknown) => boolean;
    KafkaJSConnectionError: new (message: string, options?: object) => Error;
    KafkaJSProtocolError: new (error: object) => Error;
  };

test('kafkajs alone does not join again on a connection error to its coordinator', () => {
  const refused = new KafkaJSConnectionError('Connection error: connect ECONNREFUSED', {
    broker: '127.0.0.1:9092',
  });
  assert.equal(isRebalancing(refused), false, 'so it retried the dead node until it restarted');
});

test('a heartbeat refused by the connection becomes an error kafkajs joins again on', async () => {
  const refused = new KafkaJSConnectionError('Connection error: connect ECONNREFUSED');
  const heartbeat = rejoiningHeartbeat(async () => {
    throw refused;
  });
  const error = await heartbeat.call({}, { interval: 1000 }).then(
    () => undefined,
    (e: unknown) => e,
  );
  assert.equal(isRebalancing(error), true);
  assert.equal(isKafkaJSError(error), true, "kafkajs's retrier retries it");
  assert.equal((error as { retriable?: boolean }).retriable, true);
  assert.equal((error as Error).cause, refused);
});

test('other heartbeat errors and successes pass unchanged', async () => {
  const rebalancing = new KafkaJSProtocolError({
    type: 'REBALANCE_IN_PROGRESS',
    code: 27,
    retriable: false,
    message: 'rebalancing',
  });
  const failing = rejoiningHeartbeat(async () => {
    throw rebalancing;
  });
  await assert.rejects(failing.call({}, { interval: 1 }), (e) => e === rebalancing);
  const ok = rejoiningHeartbeat(async function (this: unknown) {
    return this;
  });
  const self = {};
  assert.equal(await ok.call(self, { interval: 1 }), self, 'called on its consumer group');
});

test('every kafkajs consumer group of the process heartbeats through it', () => {
  assert.equal(coordinatorLossRejoinInstalled(), true);
  const { prototype } = require('kafkajs/src/consumer/consumerGroup.js') as {
    prototype: { heartbeat: { name: string } };
  };
  assert.notEqual(prototype.heartbeat.name, 'heartbeat', "kafkajs's own method was replaced");
});

test("a member's last failed heartbeat is remembered by kind until one passes: only REBALANCE_IN_PROGRESS is a rebalance the group waits in", async () => {
  const answers: (Error | undefined)[] = [
    new KafkaJSProtocolError({
      type: 'ILLEGAL_GENERATION',
      code: 22,
      retriable: false,
      message: 'generation moved on',
    }),
    new KafkaJSProtocolError({
      type: 'REBALANCE_IN_PROGRESS',
      code: 27,
      retriable: false,
      message: 'rebalancing',
    }),
    new KafkaJSConnectionError('Connection error: connect ECONNREFUSED'),
    undefined,
  ];
  const heartbeat = rejoiningHeartbeat(async () => {
    const answer = answers.shift();
    if (answer) throw answer;
  });
  const group = { memberId: 'member-a' };
  const beat = () => heartbeat.call(group, { interval: 1 }).catch(() => undefined);
  assert.equal(lastHeartbeatFailure('member-a'), undefined, 'nothing before a heartbeat');
  await beat();
  assert.equal(lastHeartbeatFailure('member-a'), 'ILLEGAL_GENERATION');
  await beat();
  assert.equal(lastHeartbeatFailure('member-a'), 'REBALANCE_IN_PROGRESS');
  await beat();
  assert.equal(
    lastHeartbeatFailure('member-a'),
    'NOT_COORDINATOR_FOR_GROUP',
    'a coordinator out of reach is one that moved',
  );
  assert.equal(lastHeartbeatFailure('member-b'), undefined, 'kept per member');
  await beat();
  assert.equal(lastHeartbeatFailure('member-a'), undefined, 'a heartbeat that passed clears it');
  answers.push(new Error('lost'));
  await beat();
  forgetHeartbeats('member-a');
  assert.equal(lastHeartbeatFailure('member-a'), undefined, 'forgotten when the member leaves');
});
