/**
 * A callback a group member runs before it rejoins a rebalancing group, which kafkajs
 * (2.2.4) does not offer. The Java consumer calls `onPartitionsRevoked` there: the
 * member finishes and commits what it has in flight while the group waits for it, so
 * the partitions' next owners find them settled. kafkajs's runner rejoins
 * (`ConsumerGroup.joinAndSync`) as soon as a heartbeat or fetch answers
 * REBALANCE_IN_PROGRESS, and the member that learns of a rebalance last completes it at
 * once: its partitions moved with their sends still in flight.
 *
 * `joinAndSync` is wrapped once per process (`kafkajs-join.ts`; the consumer group is
 * internal to kafkajs, so the callback is found by the member id the coordinator gave it,
 * unique per member). A first join (no member id yet) and a rejoin after the member was
 * expelled (kafkajs clears the id) run no callback: nothing of theirs can be settled.
 * The callback is bounded by its owner; one that fails does not keep the member out.
 * kafkajs also rejoins after stale metadata, with no rebalance: the owner tells the two
 * apart. Should kafkajs's internals move, nothing is wrapped and members rejoin at once.
 */
import { aroundJoins } from './kafkajs-join.ts';

type BeforeRejoin = () => Promise<void>;

const callbacks = new Map<string, BeforeRejoin>();
/** Whether joins run the callbacks; unset until first asked. */
let available: boolean | undefined;

function wrapJoin(): boolean {
  available ??= aroundJoins({
    // A callback that fails is ignored by the join wrapper: the member rejoins anyway.
    before: async (group) => {
      const before = group.memberId ? callbacks.get(group.memberId) : undefined;
      if (before) await before();
    },
  });
  return available;
}

/** Whether rejoins run their member's callback (false when kafkajs is laid out otherwise). */
export function rejoinHookInstalled(): boolean {
  return wrapJoin();
}

/**
 * Runs `before` ahead of each rejoin of the member `memberId`, until the returned
 * function removes it. A member id changes when the member is expelled and joins anew:
 * register again under the new one.
 */
export function beforeRejoin(memberId: string, before: BeforeRejoin): () => void {
  // Another kafkajs layout: members rejoin at once, as kafkajs alone does.
  if (!wrapJoin()) return () => undefined;
  callbacks.set(memberId, before);
  return () => {
    if (callbacks.get(memberId) === before) callbacks.delete(memberId);
  };
}
