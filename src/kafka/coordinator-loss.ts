/**
 * A consumer whose group coordinator died rejoins at once instead of after a minute.
 *
 * kafkajs looks the group coordinator up only when it joins the group. When the node
 * coordinating the group is killed, every heartbeat fails with a connection error, which
 * kafkajs retries against the same dead node (it re-joins only on REBALANCE_IN_PROGRESS,
 * NOT_COORDINATOR_FOR_GROUP or ILLEGAL_GENERATION) until its retries run out and the
 * consumer restarts: on a three-node cluster ferry committed nothing for about a minute
 * after such a kill (`test/chaos/cluster-failover-check.ts`, 62 and 100 of 300 results
 * after 90 s). A heartbeat that cannot reach its coordinator is reported here as the
 * coordinator having moved, which kafkajs answers by joining again, and joining looks
 * the coordinator up afresh.
 */
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
// kafkajs's own error class: its retrier retries only its errors.
const { KafkaJSError } = require('kafkajs/src/errors.js') as {
  KafkaJSError: new (message: string, options: { retriable: boolean }) => Error;
};

type Heartbeat = (this: unknown, options: { interval: number }) => Promise<unknown>;

/** What kafkajs answers by joining again (see its `isRebalancing`). */
const COORDINATOR_MOVED = 'NOT_COORDINATOR_FOR_GROUP';

function isConnectionError(error: unknown): boolean {
  const name = (error as { name?: unknown } | null)?.name;
  return name === 'KafkaJSConnectionError' || name === 'KafkaJSConnectionClosedError';
}

/** The error kafkajs re-joins on, for a heartbeat that could not reach its coordinator. */
export function coordinatorLost(error: Error): Error {
  const moved = new KafkaJSError(
    `the group coordinator cannot be reached (${error.message}): joining again to find it`,
    { retriable: true },
  );
  return Object.assign(moved, { type: COORDINATOR_MOVED, cause: error });
}

/** `heartbeat`, with connection errors turned into the coordinator having moved. */
export function rejoiningHeartbeat(heartbeat: Heartbeat): Heartbeat {
  return async function (this: unknown, options) {
    try {
      return await heartbeat.call(this, options);
    } catch (error: unknown) {
      if (error instanceof Error && isConnectionError(error)) throw coordinatorLost(error);
      throw error;
    }
  };
}

let installed = false;

/**
 * Puts `rejoiningHeartbeat` under every kafkajs consumer of the process (kafkajs looks
 * the method up on its prototype at each call). Idempotent; false when kafkajs is laid
 * out otherwise, and the tests say so.
 */
export function installCoordinatorLossRejoin(): boolean {
  if (installed) return true;
  let consumerGroup: { prototype: { heartbeat: Heartbeat } };
  try {
    consumerGroup = require('kafkajs/src/consumer/consumerGroup.js') as typeof consumerGroup;
  } catch {
    return false;
  }
  if (typeof consumerGroup.prototype.heartbeat !== 'function') return false;
  consumerGroup.prototype.heartbeat = rejoiningHeartbeat(consumerGroup.prototype.heartbeat);
  installed = true;
  return true;
}

/** Whether this process's kafkajs consumers rejoin when their coordinator is unreachable. */
export function coordinatorLossRejoinInstalled(): boolean {
  return installed;
}
