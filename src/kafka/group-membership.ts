/**
 * A consumer's membership of its group (generation and member id) as the coordinator
 * last gave it. kafkajs (2.2.4) keeps the generation inside its internal ConsumerGroup and
 * tells it to no one: its GROUP_JOIN event names the member, never the generation. Offsets
 * committed in a transaction with a membership (TxnOffsetCommit v3) are refused once the
 * group has moved on from it (`generation-fenced-commits.ts`).
 *
 * kafkajs's join (`ConsumerGroup.joinAndSync`) is wrapped once per process
 * (`kafkajs-join.ts`). A membership
 * is known from the moment that join returns (just after kafkajs's GROUP_JOIN event) until
 * the member starts joining again: kafkajs sets the next generation before the group has
 * answered which partitions go with it, and a generation whose assignment this member has
 * not seen must not commit anything. Which partitions a membership may commit is not the
 * coordinator's to check (it fences by member and generation only): a committer that
 * takes the membership of each batch when it is fetched, rather than asking at commit
 * time, commits nothing of a batch fetched before a rebalance.
 * Should kafkajs's internals move, nothing is wrapped and no membership is known.
 */
import type { GroupMembership } from './group-fenced-offsets.ts';
import { aroundJoins, type ConsumerGroupLike } from './kafkajs-join.ts';

/**
 * The consumer group of each member id since its join, held weakly: every consumer of the
 * process joins through here, and one that is dropped without a word must not be kept.
 */
const groups = new Map<string, WeakRef<ConsumerGroupLike>>();
const collected = new FinalizationRegistry<string>((memberId) => {
  if (groups.get(memberId)?.deref() === undefined) groups.delete(memberId);
});
/** What each group's last completed join gave it; none while it joins. */
const joined = new WeakMap<ConsumerGroupLike, GroupMembership>();
/** Whether joins are followed; unset until first asked. */
let available: boolean | undefined;

function wrapJoin(): boolean {
  available ??= aroundJoins({
    starting: (group) => {
      joined.delete(group);
    },
    joined: (group) => {
      const { memberId, generationId } = group;
      if (!memberId || generationId === null) return;
      joined.set(group, { memberId, generationId, groupInstanceId: null });
      if (groups.get(memberId)?.deref() !== group) {
        groups.set(memberId, new WeakRef(group));
        collected.register(group, memberId);
      }
    },
  });
  return available;
}

/**
 * Starts following the memberships kafkajs's consumers are given; call before a consumer's
 * first join. @returns false when kafkajs's internals are not where expected.
 */
export function trackMemberships(): boolean {
  return wrapJoin();
}

/**
 * The membership kafkajs holds now for the member `memberId`, when its last join completed;
 * undefined before that, while it joins again, after it left or was expelled (kafkajs
 * clears the id), or when kafkajs's internals are not where expected.
 */
export function liveMembership(memberId: string | undefined): GroupMembership | undefined {
  if (memberId === undefined || !wrapJoin()) return undefined;
  const group = groups.get(memberId)?.deref();
  const membership = group ? joined.get(group) : undefined;
  if (!group || !membership || membership.memberId !== memberId) return undefined;
  // kafkajs cleared the id (a leave, an unknown member) or began another generation.
  if (group.memberId !== memberId || group.generationId !== membership.generationId) {
    return undefined;
  }
  return membership;
}

/** Drops what is kept for `memberId` (its consumer stopped or crashed, or it has a new id). */
export function forgetMembership(memberId: string | undefined): void {
  if (memberId === undefined) return;
  const group = groups.get(memberId)?.deref();
  if (group) joined.delete(group);
  groups.delete(memberId);
}
