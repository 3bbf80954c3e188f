/**
 * kafkajs's group join (`ConsumerGroup.joinAndSync`, internal to kafkajs 2.2.4), wrapped
 * once per process for the modules that act around it, in phases whose order does not
 * depend on which module asked first: every `before` (a member's rejoin callback, run while
 * it still holds its membership: rejoin-hook.ts), then every `starting` (the membership is
 * given up until the join completes: group-membership.ts), the join itself, then every
 * `joined`. Should kafkajs's internals move, nothing is wrapped and no hook runs.
 */
import { wrapKafkajsMethod } from './kafkajs-internals.ts';

/** The parts of kafkajs's ConsumerGroup the hooks read. */
export interface ConsumerGroupLike {
  readonly memberId: string | null;
  readonly generationId: number | null;
}

export interface JoinHooks {
  /** Awaited before the join; a failure is ignored. */
  readonly before?: (group: ConsumerGroupLike) => Promise<void>;
  /** After every `before`, right before the join. */
  readonly starting?: (group: ConsumerGroupLike) => void;
  /** Once the join (and its sync) returned. */
  readonly joined?: (group: ConsumerGroupLike) => void;
}

type JoinAndSync = (this: ConsumerGroupLike) => Promise<void>;

const registered: JoinHooks[] = [];
/** Whether kafkajs's join is wrapped; unset until first asked. */
let available: boolean | undefined;

function guarded(
  hook: ((group: ConsumerGroupLike) => void) | undefined,
  group: ConsumerGroupLike,
): void {
  try {
    hook?.(group);
  } catch {
    // See hookedJoin: a hook never decides the join.
  }
}

/**
 * `join` with `hooks()` run around it. kafkajs may join one group twice at once (each
 * broker's fetcher recovers from a rebalance on its own): `joined` runs only when the last
 * join in flight for the group returned (counted from its `before` hooks on), and only if
 * that one succeeded, so a membership is never recorded while another join of the same
 * member is still under way; kafkajs joins again after a failed one.
 */
export function hookedJoin(join: JoinAndSync, hooks: () => readonly JoinHooks[]): JoinAndSync {
  const inFlight = new WeakMap<ConsumerGroupLike, number>();
  return async function joinAndSync(this: ConsumerGroupLike) {
    // Counted from the start: a join still in its `before` hooks is under way too.
    inFlight.set(this, (inFlight.get(this) ?? 0) + 1);
    let left = 0;
    try {
      // A hook that fails must neither keep the member out of its group nor fail a join
      // that succeeded: what it was for is then left undone, the join goes on.
      for (const { before } of hooks()) {
        if (before)
          await Promise.resolve(this)
            .then(before)
            .catch(() => undefined);
      }
      for (const { starting } of hooks()) guarded(starting, this);
      await join.call(this);
    } finally {
      left = (inFlight.get(this) ?? 1) - 1;
      if (left > 0) inFlight.set(this, left);
      else inFlight.delete(this);
    }
    if (left === 0) for (const { joined } of hooks()) guarded(joined, this);
  };
}

/**
 * Runs `hooks` around every join of every kafkajs consumer of the process from now on.
 * Call once per module. @returns false, running nothing, when kafkajs's internals are not
 * where expected.
 */
export function aroundJoins(hooks: JoinHooks): boolean {
  available ??= wrapKafkajsMethod<JoinAndSync>(
    'kafkajs/src/consumer/consumerGroup.js',
    'joinAndSync',
    (join) => hookedJoin(join, () => registered),
  );
  if (available) registered.push(hooks);
  return available;
}
