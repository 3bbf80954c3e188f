/**
 * A consumer that finds no group coordinator for a moment tries again instead of stopping
 * for good.
 *
 * kafkajs (2.2.4) asks each broker it knows for a group's coordinator; when every one of
 * them fails (a broker shutting down answers NOT_COORDINATOR, then drops the connection
 * mid-request; a cluster restarting), it throws KafkaJSGroupCoordinatorNotFound, which it
 * declares non-retriable. Met by a consumer rejoining its group, that ends the consumer
 * with `restart: false`, and ferry exits: a broker's restart could take every replica down
 * with it (seen: "Crash: KafkaJSNonRetriableError: Failed to find group coordinator" 20 ms
 * after a heartbeat was answered NOT_COORDINATOR while the broker shut down). Here that
 * error becomes the one kafkajs's lookup retries, GROUP_COORDINATOR_NOT_AVAILABLE: it
 * refreshes the metadata and asks again with back-off, and should its retries run out the
 * consumer restarts, as for any passing error.
 *
 * Only when every broker's failure was a passing one: kafkajs drops them, so each broker's
 * answer to the lookup is noted while it runs (`Broker.findGroupCoordinator` wrapped too).
 * A refusal (a group or transactional id this principal may not use) is non-retriable and
 * leaves kafkajs's error as it was, so start-up still stops on a missing ACL at once.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { KafkaJSError, wrapKafkajsMethod } from './kafkajs-internals.ts';

/** kafkajs's name for a coordinator that is not available yet, which its lookup retries. */
const NOT_AVAILABLE = 'GROUP_COORDINATOR_NOT_AVAILABLE';
const NOT_FOUND = 'KafkaJSGroupCoordinatorNotFound';

/** The cluster's lookup of a coordinator, and each broker's answer to it: one shape. */
type Lookup = (this: unknown, query: unknown) => Promise<unknown>;

/**
 * The error kafkajs retries, for its `Failed to find group coordinator`. Without a cause on
 * purpose: kafkajs decides whether a crashed consumer restarts by the innermost cause of its
 * error, and the original is declared non-retriable.
 */
export function coordinatorNotFoundYet(error: Error): Error {
  const retriable = new KafkaJSError(
    `${error.message}: no broker answered for the group coordinator; asking again`,
    { retriable: true },
  );
  return Object.assign(retriable, { type: NOT_AVAILABLE });
}

/** Each broker's failed answer to the lookup running in this async context. */
const failures = new AsyncLocalStorage<unknown[]>();

/** Whether kafkajs would retry `error` (its own `retriable`; a connection error is). */
function passing(error: unknown): boolean {
  return (error as { retriable?: unknown } | null)?.retriable === true;
}

/** `findGroupCoordinatorMetadata`, with kafkajs's not-found error made retriable when every failure was. */
export function retryingWhenNotFound(find: Lookup): Lookup {
  return async function findGroupCoordinatorMetadata(this: unknown, query: unknown) {
    const seen: unknown[] = [];
    try {
      return await failures.run(seen, () => find.call(this, query));
    } catch (error: unknown) {
      const notFound = error instanceof Error && error.name === NOT_FOUND;
      if (notFound && seen.length > 0 && seen.every(passing)) throw coordinatorNotFoundYet(error);
      throw error;
    }
  };
}

/** `Broker.findGroupCoordinator`, noting a failure for the lookup it is part of. */
export function notingFailures(ask: Lookup): Lookup {
  return async function findGroupCoordinator(this: unknown, query: unknown) {
    try {
      return await ask.call(this, query);
    } catch (error: unknown) {
      failures.getStore()?.push(error);
      throw error;
    }
  };
}

let installed: boolean | undefined;

/**
 * Puts `retryingWhenNotFound` under every kafkajs cluster of the process, and
 * `notingFailures` under every broker (kafkajs looks both methods up at each call).
 * Idempotent; false when kafkajs is laid out otherwise.
 */
export function installCoordinatorNotFoundRetry(): boolean {
  installed ??=
    wrapKafkajsMethod<Lookup>(
      'kafkajs/src/broker/index.js',
      'findGroupCoordinator',
      notingFailures,
    ) &&
    wrapKafkajsMethod<Lookup>(
      'kafkajs/src/cluster/index.js',
      'findGroupCoordinatorMetadata',
      retryingWhenNotFound,
    );
  return installed;
}
