import assert from 'node:assert/strict';
import { test } from 'node:test';
import { coordinatorMoving, whileCoordinatorMoves } from '../../src/kafka/coordinator-errors.ts';

/** An error shaped as kafkajs reports a broker's answer. */
function answer(type: string): Error {
  return Object.assign(new Error(type), { name: 'KafkaJSProtocolError', type });
}

test('answers of a coordinator that moved or loads, under either name, and unreached brokers are passing', () => {
  for (const type of [
    'NOT_COORDINATOR',
    'NOT_COORDINATOR_FOR_GROUP',
    'COORDINATOR_NOT_AVAILABLE',
    'GROUP_COORDINATOR_NOT_AVAILABLE',
    'COORDINATOR_LOAD_IN_PROGRESS',
    'GROUP_LOAD_IN_PROGRESS',
  ]) {
    assert.equal(coordinatorMoving(answer(type)), true, type);
  }
  for (const name of [
    'KafkaJSConnectionError',
    'KafkaJSRequestTimeoutError',
    'KafkaJSBrokerNotFound',
  ]) {
    assert.equal(coordinatorMoving(Object.assign(new Error(name), { name })), true, name);
  }
});

test('other answers and errors are not', () => {
  for (const type of [
    'CONCURRENT_TRANSACTIONS',
    'GROUP_AUTHORIZATION_FAILED',
    'INVALID_PRODUCER_EPOCH',
  ]) {
    assert.equal(coordinatorMoving(answer(type)), false, type);
  }
  assert.equal(coordinatorMoving(new Error('a bug')), false);
  assert.equal(coordinatorMoving(undefined), false);
});

test('a step is asked again while its coordinator moves, and its answer returned', async () => {
  let calls = 0;
  const value = await whileCoordinatorMoves(async () => {
    calls += 1;
    if (calls <= 2) throw answer('NOT_COORDINATOR_FOR_GROUP');
    return 'offsets';
  });
  assert.equal(value, 'offsets');
  assert.equal(calls, 3);
});

test('any other failure ends the step at once', async () => {
  let calls = 0;
  await assert.rejects(
    whileCoordinatorMoves(async () => {
      calls += 1;
      throw answer('GROUP_AUTHORIZATION_FAILED');
    }),
    /GROUP_AUTHORIZATION_FAILED/,
  );
  assert.equal(calls, 1);
});

test('a coordinator that keeps moving ends the step after 8 attempts', async () => {
  let calls = 0;
  await assert.rejects(
    whileCoordinatorMoves(async () => {
      calls += 1;
      throw answer('GROUP_LOAD_IN_PROGRESS');
    }),
    /GROUP_LOAD_IN_PROGRESS/,
  );
  assert.equal(calls, 8);
});
