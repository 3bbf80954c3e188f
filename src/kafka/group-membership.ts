/**
 * A consumer's membership of its group (generation and member id) as the coordinator
 * last gave it. kafkajs (2.2.4) keeps the generation inside its internal ConsumerGroup and
 * tells it to no one: its GROUP_JOIN event names the member, never the generation. Offsets
 * committed in a transaction with the membership (TxnOffsetCommit v3) are refused once the
 * group has moved on (`generation-fenced-commits.ts`), which is what lets one
 * transactional producer serve every partition a replica owns.
 *
 * kafkajs's join (`ConsumerGroup.joinAndSync`) is wrapped once per process; after each
 * join its consumer group is found again by the member id the coordinator gave it, and
 * read when asked, so the answer is the generation kafkajs holds at that moment. Should
 * kafkajs's internals move, nothing is wrapped and no membership is known.
 */
import { createRequire } from 'node:module';
import type { GroupMembership } from './group-fenced-offsets.ts';

const require = createRequire(import.meta.url);

interface ConsumerGroupLike {
  memberId: string | null;
  generationId: number | null;
  joinAndSync(): Promise<void>;
}

/**
 * The consumer group of each member id since its join, held weakly: every consumer of the
 * process joins through here, and one that is dropped without a word must not be kept.
 */
const groups = new Map<string, WeakRef<ConsumerGroupLike>>();
const collected = new FinalizationRegistry<string>((memberId) => {
  if (groups.get(memberId)?.deref() === undefined) groups.delete(memberId);
});
let wrapped = false;
let available = false;

/** Wraps kafkajs's join once. @returns false when kafkajs's internals are not where expected. */
function wrapJoin(): boolean {
  if (wrapped) return available;
  wrapped = true;
  let ConsumerGroup: { prototype: ConsumerGroupLike };
  try {
    ConsumerGroup = require('kafkajs/src/consumer/consumerGroup.js');
  } catch {
    return false;
  }
  const join = ConsumerGroup.prototype.joinAndSync;
  if (typeof join !== 'function') return false;
  available = true;
  ConsumerGroup.prototype.joinAndSync = async function joinAndSync(this: ConsumerGroupLike) {
    await join.call(this);
    if (this.memberId && groups.get(this.memberId)?.deref() !== this) {
      groups.set(this.memberId, new WeakRef(this));
      collected.register(this, this.memberId);
    }
  };
  return true;
}

/** Whether memberships can be read (false when kafkajs is laid out otherwise). */
export function membershipKnown(): boolean {
  return wrapJoin();
}

/**
 * The generation and member id kafkajs holds now for the member `memberId`; undefined
 * before its first join, after it left or was expelled (kafkajs clears the id), or when
 * kafkajs's internals are not where expected.
 */
export function liveMembership(memberId: string | undefined): GroupMembership | undefined {
  if (memberId === undefined || !wrapJoin()) return undefined;
  const group = groups.get(memberId)?.deref();
  if (!group || group.memberId !== memberId || group.generationId === null) return undefined;
  return { generationId: group.generationId, memberId, groupInstanceId: null };
}

/** Drops what is kept for `memberId` (its consumer stopped, or it joined under a new id). */
export function forgetMembership(memberId: string | undefined): void {
  if (memberId !== undefined) groups.delete(memberId);
}
