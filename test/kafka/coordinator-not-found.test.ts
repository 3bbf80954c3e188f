/**
 * kafkajs ends a consumer for good when no broker names its group coordinator, which a
 * broker shutting down causes: its lookup throws KafkaJSGroupCoordinatorNotFound, declared
 * non-retriable, and its crash handler restarts a consumer only when the innermost cause of
 * the error is retriable (or the retries ran out: `kafkajs/src/consumer/index.js`, onCrash).
 * With ferry's workaround the lookup's failure is one kafkajs retries when every broker's
 * failure was a passing one, and a consumer whose retries run out on it restarts; a refusal
 * stays what it was. Driven with kafkajs's own retrier, errors and cluster code.
 */
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { test } from 'node:test';
import {
  coordinatorNotFoundYet,
  installCoordinatorNotFoundRetry,
  notingFailures,
} from '../../src/kafka/coordinator-not-found.ts';
import '../../src/kafka/kafkajs.ts';

const require = createRequire(import.meta.url);
type Retrier = (fn: (bail: (e: Error) => void) => Promise<unknown>) => Promise<unknown>;
const createRetry = require('kafkajs/src/retry/index.js') as (options: object) => Retrier;
const { KafkaJSGroupCoordinatorNotFound, KafkaJSConnectionClosedError } =
  require('kafkajs/src/errors.js') as {
    KafkaJSGroupCoordinatorNotFound: new (message: string) => Error;
    KafkaJSConnectionClosedError: new (message: string) => Error;
  };
const { createErrorFromCode } = require('kafkajs/src/protocol/error.js') as {
  createErrorFromCode(code: number): Error;
};
/** The protocol's code for a group this principal may not use. */
const GROUP_AUTHORIZATION_FAILED = 30;
const Cluster = require('kafkajs/src/cluster/index.js') as {
  prototype: { findGroupCoordinatorMetadata(query: object): Promise<unknown> };
};

/** What kafkajs's consumer decides after a crash with `error`: restart or not. */
function restarts(error: Error & { cause?: unknown }): boolean {
  let innermost: Error & { cause?: unknown; retriable?: unknown } = error;
  while (innermost.cause instanceof Error) innermost = innermost.cause;
  return error.name === 'KafkaJSNumberOfRetriesExceeded' || innermost.retriable === true;
}

/** The rejection of kafkajs's retrier running `fails` until its retries run out. */
async function retried(fails: () => Error): Promise<{ error: Error; attempts: number }> {
  let attempts = 0;
  const retrier = createRetry({ retries: 3, initialRetryTime: 1, maxRetryTime: 5 });
  const error = await retrier(async () => {
    attempts += 1;
    throw fails();
  }).then(
    () => assert.fail('the retrier resolved'),
    (rejected: unknown) => rejected as Error,
  );
  return { error, attempts };
}

test('kafkajs alone: a lookup no broker answered crashes the consumer without a restart', async () => {
  const { error, attempts } = await retried(
    () => new KafkaJSGroupCoordinatorNotFound('Failed to find group coordinator'),
  );
  assert.equal(attempts, 1, 'not retried');
  assert.equal(error.name, 'KafkaJSNonRetriableError');
  assert.equal(restarts(error), false);
});

test("with ferry's workaround the lookup is retried, and a consumer whose retries run out restarts", async () => {
  const { error, attempts } = await retried(() =>
    coordinatorNotFoundYet(new KafkaJSGroupCoordinatorNotFound('Failed to find group coordinator')),
  );
  assert.equal(attempts, 4, 'the first try and three retries');
  assert.equal(error.name, 'KafkaJSNumberOfRetriesExceeded');
  assert.equal(restarts(error), true);
});

/** kafkajs's own lookup over one broker whose answer to it fails with `failure`. */
function lookupFailingWith(failure: () => Error): Promise<unknown> {
  const broker = { findGroupCoordinator: notingFailures(async () => Promise.reject(failure())) };
  const cluster = {
    // As kafkajs's pool: a broker whose callback failed is passed over; none left: null.
    brokerPool: {
      withBroker: async (callback: (b: object) => Promise<unknown>) => {
        try {
          return await callback({ nodeId: 0, broker });
        } catch {
          return null;
        }
      },
    },
    retrier: createRetry({ retries: 0 }),
    logger: { debug: () => undefined },
  };
  return Cluster.prototype.findGroupCoordinatorMetadata.call(cluster, { groupId: 'g' });
}

test("kafkajs's own lookup, every broker's answer a passing failure, now fails with what its caller retries", async () => {
  assert.ok(installCoordinatorNotFoundRetry(), 'kafkajs is laid out as expected');
  await assert.rejects(
    lookupFailingWith(() => new KafkaJSConnectionClosedError('Closed connection')),
    (error: Error & { type?: unknown; retriable?: unknown }) => {
      assert.equal(error.type, 'GROUP_COORDINATOR_NOT_AVAILABLE');
      assert.equal(error.retriable, true);
      assert.match(error.message, /Failed to find group coordinator/);
      return true;
    },
  );
});

test("a lookup refused for want of an ACL keeps kafkajs's error, so start-up still stops at once", async () => {
  assert.ok(installCoordinatorNotFoundRetry());
  await assert.rejects(
    lookupFailingWith(() => createErrorFromCode(GROUP_AUTHORIZATION_FAILED)),
    (error: Error & { retriable?: unknown }) => {
      assert.equal(error.name, 'KafkaJSGroupCoordinatorNotFound');
      assert.equal(error.retriable, false);
      return true;
    },
  );
});
