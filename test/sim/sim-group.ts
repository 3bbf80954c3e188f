/**
 * The simulated group coordinator of the commands topic's consumer group: members
 * join, heartbeat and leave; any join or loss starts a rebalance, which ends when every
 * known member has joined again (or after the rebalance timeout, without those that did
 * not); partitions are then spread over the members. A member not heard of within the
 * session timeout is expelled. While the broker is down nothing answers; once it is
 * back, sessions count from then (the coordinator reloads the group).
 */
import { CONNECTION_ERROR, type SimBroker } from './sim-broker.ts';

export interface Assignment {
  readonly memberId: string;
  readonly generation: number;
  readonly partitions: readonly number[];
}

interface Member {
  readonly id: string;
  lastSeenMs: number;
  joined: boolean;
  waiters: ((assignment: Assignment) => void)[];
}

/** kafkajs's texts of the heartbeat answers that make a member join again. */
export const REBALANCING_ERROR = 'The group is rebalancing, so a rejoin is needed';
export const UNKNOWN_MEMBER_ERROR = 'The coordinator is not aware of this member';
/** kafkajs's text of ILLEGAL_GENERATION: offsets or a heartbeat of a generation the group left. */
export const ILLEGAL_GENERATION_ERROR = 'Specified group generation id is not valid';

export class SimGroup {
  readonly #broker: SimBroker;
  readonly #sessionMs: number;
  readonly #members = new Map<string, Member>();
  #state: 'stable' | 'rebalancing' = 'stable';
  #generation = 0;
  #deadline: NodeJS.Timeout | undefined;
  #nextMember = 0;
  readonly #expiry: NodeJS.Timeout;
  /** Every rebalance's end: generation and members, for the run's account. */
  readonly history: { atMs: number; generation: number; members: string[] }[] = [];

  constructor(broker: SimBroker, sessionMs: number) {
    this.#broker = broker;
    this.#sessionMs = sessionMs;
    this.#expiry = setInterval(() => this.#expire(), Math.max(50, Math.floor(sessionMs / 10)));
    broker.onRestart(() => {
      for (const member of this.#members.values()) member.lastSeenMs = Date.now();
    });
  }

  get generation(): number {
    return this.#generation;
  }

  /** Joins (or joins again, with its id): settles with the member's share once the rebalance ends. */
  join(replica: string, memberId: string | undefined): Promise<Assignment> {
    this.#broker.check();
    let member = memberId === undefined ? undefined : this.#members.get(memberId);
    if (!member) {
      this.#nextMember += 1;
      member = { id: `${replica}-m${this.#nextMember}`, lastSeenMs: 0, joined: false, waiters: [] };
      this.#members.set(member.id, member);
    }
    member.lastSeenMs = Date.now();
    if (this.#state === 'stable') this.#rebalance();
    member.joined = true;
    const joined = member;
    const answer = new Promise<Assignment>((resolve) => joined.waiters.push(resolve));
    this.#maybeComplete();
    return answer;
  }

  /** @throws the answer that makes the member join again, or a connection error. */
  heartbeat(memberId: string | undefined): void {
    this.#broker.check();
    const member = memberId === undefined ? undefined : this.#members.get(memberId);
    if (!member) throw new Error(UNKNOWN_MEMBER_ERROR);
    if (this.#state === 'rebalancing') throw new Error(REBALANCING_ERROR);
    member.lastSeenMs = Date.now();
  }

  /**
   * TxnOffsetCommit v3's check, as Kafka's coordinator makes it: the member must be in the
   * group and the generation the group's current one, whether or not a rebalance is under
   * way. Kafka moves the generation when the join phase ends, before SyncGroup; this model
   * joins and syncs in one step, so it moves when the rebalance completes. Which partitions
   * the member owns is not checked; static membership (FENCED_INSTANCE_ID) is left out, as
   * kafkajs has none. @throws the coordinator's refusal, or a connection error.
   */
  checkOffsetCommit(membership: { memberId: string; generationId: number }): void {
    this.#broker.check();
    if (!this.#members.has(membership.memberId)) throw new Error(UNKNOWN_MEMBER_ERROR);
    if (membership.generationId !== this.#generation) throw new Error(ILLEGAL_GENERATION_ERROR);
  }

  leave(memberId: string | undefined): void {
    if (this.#broker.down || memberId === undefined) return;
    if (!this.#members.delete(memberId)) return;
    this.#rebalance();
    this.#maybeComplete();
  }

  /** describeGroups: stable with this member in it. @throws while the broker is down. */
  isStableMember(memberId: string | undefined): boolean {
    this.#broker.check();
    return this.#state === 'stable' && memberId !== undefined && this.#members.has(memberId);
  }

  stop(): void {
    clearInterval(this.#expiry);
    clearTimeout(this.#deadline);
  }

  #rebalance(): void {
    if (this.#state === 'rebalancing') return;
    this.#state = 'rebalancing';
    for (const member of this.#members.values()) member.joined = false;
    // Members that do not join again within the rebalance timeout are left out.
    this.#deadline = setTimeout(() => this.#complete(), this.#sessionMs);
  }

  #maybeComplete(): void {
    if (this.#state !== 'rebalancing') return;
    for (const member of this.#members.values()) if (!member.joined) return;
    this.#complete();
  }

  #complete(): void {
    if (this.#state !== 'rebalancing') return;
    if (this.#broker.down) {
      this.#deadline = setTimeout(() => this.#complete(), 100);
      return;
    }
    clearTimeout(this.#deadline);
    for (const [id, member] of this.#members) if (!member.joined) this.#members.delete(id);
    this.#generation += 1;
    this.#state = 'stable';
    const ids = [...this.#members.keys()].sort();
    this.history.push({ atMs: Date.now(), generation: this.#generation, members: ids });
    const shares = new Map<string, number[]>(ids.map((id) => [id, []]));
    for (let partition = 0; partition < this.#broker.partitions; partition++) {
      const id = ids[partition % ids.length];
      if (id !== undefined) shares.get(id)?.push(partition);
    }
    for (const member of this.#members.values()) {
      member.lastSeenMs = Date.now();
      const waiters = member.waiters;
      member.waiters = [];
      const assignment = {
        memberId: member.id,
        generation: this.#generation,
        partitions: shares.get(member.id) ?? [],
      };
      for (const wake of waiters) wake(assignment);
    }
  }

  #expire(): void {
    if (this.#broker.down) return;
    const now = Date.now();
    let lost = false;
    for (const [id, member] of this.#members) {
      if (now - member.lastSeenMs > this.#sessionMs) {
        this.#members.delete(id);
        lost = true;
      }
    }
    if (lost) {
      this.#rebalance();
      this.#maybeComplete();
    }
  }
}

export { CONNECTION_ERROR };
