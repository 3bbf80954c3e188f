/**
 * Which kafkajs errors mean that a coordinator (of a group or a transactional id) moved,
 * is still loading, or could not be reached: asking again shortly, after a fresh lookup,
 * is the cure. kafkajs names codes 14, 15 and 16 `GROUP_LOAD_IN_PROGRESS`,
 * `GROUP_COORDINATOR_NOT_AVAILABLE` and `NOT_COORDINATOR_FOR_GROUP`, while several of its
 * own retry lists look for the protocol's newer names: both are listed here.
 */
import { setTimeout as sleep } from 'node:timers/promises';

/** Protocol answers of a coordinator that is not (or not yet) the one asked. */
export const COORDINATOR_MOVING_TYPES: ReadonlySet<string> = new Set([
  'NOT_COORDINATOR',
  'NOT_COORDINATOR_FOR_GROUP',
  'COORDINATOR_NOT_AVAILABLE',
  'GROUP_COORDINATOR_NOT_AVAILABLE',
  'COORDINATOR_LOAD_IN_PROGRESS',
  'GROUP_LOAD_IN_PROGRESS',
]);

/** kafkajs's errors for a broker that did not answer (they carry no protocol type). */
const UNREACHED = new Set([
  'KafkaJSConnectionError',
  'KafkaJSConnectionClosedError',
  'KafkaJSRequestTimeoutError',
  'KafkaJSBrokerNotFound',
  'KafkaJSGroupCoordinatorNotFound',
]);

/** Whether asking again, after a fresh lookup of the coordinator, may succeed. */
export function coordinatorMoving(error: unknown): boolean {
  const { type, name } = (error ?? {}) as { type?: unknown; name?: unknown };
  if (typeof type === 'string') return COORDINATOR_MOVING_TYPES.has(type);
  return typeof name === 'string' && UNREACHED.has(name);
}

/** Attempts of a step while its coordinator moves: about 2.5 s of waits in all. */
const MOVING_ATTEMPTS = 8;

/** Runs `step`, again while its coordinator moves (10 ms doubling, each wait at most 1 s). */
export async function whileCoordinatorMoves<T>(step: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await step();
    } catch (error: unknown) {
      if (!coordinatorMoving(error) || attempt >= MOVING_ATTEMPTS) throw error;
      await sleep(Math.min(1_000, 10 * 2 ** attempt));
    }
  }
}
