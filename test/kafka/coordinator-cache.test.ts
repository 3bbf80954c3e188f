import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Kafka } from 'kafkajs';
import {
  CoordinatorCache,
  cacheCoordinators,
  doubtsCoordinator,
} from '../../src/kafka/coordinator-cache.ts';
import { COORDINATOR_MOVING_TYPES } from '../../src/kafka/coordinator-errors.ts';
import { BUSY_RETRIES, busyRetryWaitMs, TRANSACTION_RETRY } from '../../src/kafka/producers.ts';

test('a remembered coordinator is found until forgotten', () => {
  const cache = new CoordinatorCache(10_000, () => 0);
  assert.equal(cache.lookup('1:txn-a'), undefined);
  cache.remember('1:txn-a', 2);
  assert.equal(cache.lookup('1:txn-a'), 2);
  assert.equal(cache.lookup('0:txn-a'), undefined, 'a group of the same name is another key');
  cache.forget('1:txn-a');
  assert.equal(cache.lookup('1:txn-a'), undefined);
});

test('a remembered coordinator is looked up again once its time is up', () => {
  let now = 1_000;
  const cache = new CoordinatorCache(500, () => now);
  cache.remember('0:group', 3);
  now = 1_499;
  assert.equal(cache.lookup('0:group'), 3);
  now = 1_500;
  assert.equal(cache.lookup('0:group'), undefined);
  assert.equal(cache.size, 0, 'the expired entry is dropped');
});

test('remembering again renews the time and the node', () => {
  let now = 0;
  const cache = new CoordinatorCache(100, () => now);
  cache.remember('0:group', 1);
  now = 90;
  cache.remember('0:group', 2);
  now = 150;
  assert.equal(cache.lookup('0:group'), 2);
});

test('which failures put the coordinator in doubt', () => {
  for (const type of COORDINATOR_MOVING_TYPES) {
    assert.equal(doubtsCoordinator({ name: 'KafkaJSProtocolError', type }), true, type);
  }
  // The coordinator answered: it is the right one.
  for (const type of ['CONCURRENT_TRANSACTIONS', 'INVALID_PRODUCER_EPOCH', 'PRODUCER_FENCED']) {
    assert.equal(doubtsCoordinator({ name: 'KafkaJSProtocolError', type }), false, type);
  }
  // No answer at all.
  assert.equal(doubtsCoordinator({ name: 'KafkaJSConnectionError', code: 'ECONNREFUSED' }), true);
  assert.equal(doubtsCoordinator({ name: 'KafkaJSRequestTimeoutError' }), true);
  assert.equal(doubtsCoordinator(new Error('anything else')), true);
  assert.equal(doubtsCoordinator(undefined), true);
});

test('the cache installs on the kafkajs instance it is given, and only there', () => {
  const cached = new Kafka({ brokers: ['127.0.0.1:9'] });
  const plain = new Kafka({ brokers: ['127.0.0.1:9'] });
  cacheCoordinators(cached);
  // kafkajs creates a cluster per client; the cached instance's clusters carry their own
  // findGroupCoordinator, the other instance's keep kafkajs's.
  assert.ok(Object.hasOwn(kafkaCluster(cached), 'findGroupCoordinator'));
  assert.ok(!Object.hasOwn(kafkaCluster(plain), 'findGroupCoordinator'));
});

test("an instance without kafkajs's cluster factory is refused, not silently left uncached", () => {
  assert.throws(() => cacheCoordinators({} as Kafka), /no cluster factory/);
});

test('a busy coordinator is asked again after 2 ms, then half as long again each time, for a few seconds', () => {
  assert.equal(busyRetryWaitMs(0), 2);
  assert.equal(busyRetryWaitMs(1), 3);
  assert.equal(busyRetryWaitMs(2), 5);
  let total = 0;
  for (let attempt = 0; attempt < BUSY_RETRIES; attempt++) total += busyRetryWaitMs(attempt);
  // Markers take milliseconds; past a few seconds the commit fails to its caller.
  assert.ok(total > 3_000 && total < 10_000, `${total} ms`);
  assert.ok(busyRetryWaitMs(100) <= TRANSACTION_RETRY.maxRetryTime);
});

/** A cluster created the way kafkajs creates one for each client. */
function kafkaCluster(kafka: Kafka): object {
  const holder = kafka as unknown as Record<symbol, (options: object) => object>;
  const key = Object.getOwnPropertySymbols(holder).find(
    (s) => s.description === 'private:Kafka:createCluster',
  );
  assert.ok(key);
  return (holder[key] as (options: object) => object)({});
}
