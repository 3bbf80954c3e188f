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
import { KafkaJSError, wrapKafkajsMethod } from './kafkajs-internals.ts';

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

/** Per member id, the error type of its last heartbeat that failed (none after one that passed). */
const lastFailures = new Map<string, string>();

/**
 * Why the member's last heartbeat failed (kafkajs's error type, e.g.
 * `REBALANCE_IN_PROGRESS`), or undefined when it passed. kafkajs announces a rebalance
 * for several answers alike; only this tells a rebalance the group is waiting in from a
 * generation that moved on or a coordinator that is gone.
 */
export function lastHeartbeatFailure(memberId: string | undefined): string | undefined {
  return memberId === undefined ? undefined : lastFailures.get(memberId);
}

/** `heartbeat`, with connection errors turned into the coordinator having moved. */
export function rejoiningHeartbeat(heartbeat: Heartbeat): Heartbeat {
  return async function (this: unknown, options) {
    const memberId = (this as { memberId?: unknown } | null)?.memberId;
    const member = typeof memberId === 'string' && memberId !== '' ? memberId : undefined;
    try {
      const answer = await heartbeat.call(this, options);
      if (member !== undefined) lastFailures.delete(member);
      return answer;
    } catch (error: unknown) {
      const failure =
        error instanceof Error && isConnectionError(error) ? coordinatorLost(error) : error;
      if (member !== undefined) {
        const type = (failure as { type?: unknown } | null)?.type;
        lastFailures.set(member, typeof type === 'string' ? type : 'unknown');
      }
      throw failure;
    }
  };
}

/** Forgets what was recorded for a member that left. */
export function forgetHeartbeats(memberId: string | undefined): void {
  if (memberId !== undefined) lastFailures.delete(memberId);
}

let installed = false;

/**
 * Puts `rejoiningHeartbeat` under every kafkajs consumer of the process (kafkajs looks
 * the method up on its prototype at each call). Idempotent; false when kafkajs is laid
 * out otherwise, and the tests say so.
 */
export function installCoordinatorLossRejoin(): boolean {
  installed ||= wrapKafkajsMethod<Heartbeat>(
    'kafkajs/src/consumer/consumerGroup.js',
    'heartbeat',
    rejoiningHeartbeat,
  );
  return installed;
}

/** Whether this process's kafkajs consumers rejoin when their coordinator is unreachable. */
export function coordinatorLossRejoinInstalled(): boolean {
  return installed;
}
