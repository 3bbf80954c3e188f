/**
 * A simulated group consumer with kafkajs's behaviour where ferry's races live: one
 * fetch in flight at a time; the next fetch goes out once the last answer was handed
 * over; the group offset is read lazily, at a partition's first fetch after each join
 * (so it may be stale); a rejoin waits for the fetch in flight; data of a paused or
 * rewound partition is dropped; heartbeats go out from the fetch loop and from the
 * batches' own `heartbeat()`. A connection error makes it join again without a word
 * (as the adapter does after a lost coordinator), a rebalance answer with one
 * (`onRebalancing`). Fault: with `lateFetchRate`, a fetch sent before a rejoin is handed
 * over after it (another broker's fetcher on a cluster), moving the position past it.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { heartbeatIntervalOf } from '../../src/kafka/consumers.ts';
import type {
  BatchConsumerOptions,
  GroupConsumer,
  GroupMembership,
  InboundRecord,
} from '../../src/kafka/kafka-port.ts';
import type { ReplicaLink } from './replica-link.ts';
import type { SimBroker } from './sim-broker.ts';
import { REBALANCING_ERROR, type SimGroup } from './sim-group.ts';
import type { SimRandom } from './sim-random.ts';

export interface ConsumerFaults {
  readonly lateFetchRate: number;
  readonly maxBatchRecords: number;
  /**
   * Share of rejoins (not first joins) whose answer (kafkajs's SyncGroup) reaches the member late: the group
   * has completed and the others run with their new partitions while this member, which
   * heartbeats in the new generation meanwhile, has not heard of its own (absent: none).
   */
  readonly lateSyncRate?: number;
}

/** Where the simulator notes what it did to a replica (the run's log). */
export type SimNote = (event: Record<string, unknown>) => void;

type Fetched = Map<number, { from: bigint; next: bigint; records: InboundRecord[]; seeks: number }>;

export class SimConsumer implements GroupConsumer {
  readonly #link: ReplicaLink;
  readonly #broker: SimBroker;
  readonly #group: SimGroup;
  readonly #random: SimRandom;
  readonly #options: BatchConsumerOptions;
  readonly #faults: ConsumerFaults;
  readonly #note: SimNote;
  readonly heartbeatIntervalMs: number;
  #confirmedAt = 0;
  #memberId: string | undefined;
  /** The generation of the last completed join; none while joining or once stopped. */
  #generation: number | undefined;
  #assigned: readonly number[] = [];
  #running = false;
  #paused = false;
  #rejoin: 'silent' | 'rebalancing' | undefined;
  readonly #positions = new Map<number, bigint>();
  readonly #seeks = new Map<number, number>();
  #joins = 0;
  #loop: Promise<void> | undefined;

  constructor(
    link: ReplicaLink,
    broker: SimBroker,
    group: SimGroup,
    random: SimRandom,
    options: BatchConsumerOptions,
    faults: ConsumerFaults,
    note: SimNote,
  ) {
    this.#note = note;
    this.#link = link;
    this.#broker = broker;
    this.#group = group;
    this.#random = random;
    this.#options = options;
    this.#faults = faults;
    this.heartbeatIntervalMs = heartbeatIntervalOf(options);
  }

  get confirmedAt(): number {
    return this.#confirmedAt;
  }
  get memberId(): string | undefined {
    return this.#memberId;
  }
  get membership(): GroupMembership | undefined {
    const memberId = this.#memberId;
    const generationId = this.#generation;
    if (memberId === undefined || generationId === undefined) return undefined;
    return { memberId, generationId, groupInstanceId: null };
  }
  get assignedPartitions(): readonly number[] {
    return this.#assigned;
  }
  get running(): boolean {
    return this.#running;
  }
  get paused(): boolean {
    return this.#paused;
  }

  async start(options: { paused?: boolean } = {}): Promise<void> {
    if (this.#running) return;
    this.#paused = options.paused ?? false;
    this.#running = true;
    await this.#join();
    this.#loop = this.#run();
  }

  pause(): void {
    this.#paused = true;
  }

  resume(): void {
    this.#paused = false;
  }

  async stop(): Promise<void> {
    if (!this.#running) return;
    this.#running = false;
    // As the kafkajs port, which forgets the membership as its stop begins.
    this.#generation = undefined;
    await this.#loop;
    await this.#link.hop(this.#random, 2);
    this.#group.leave(this.#memberId);
  }

  async #join(): Promise<void> {
    // A member that is joining has no membership to commit with (kafkajs already holds the
    // next generation while the group has not answered its assignment).
    this.#generation = undefined;
    while (this.#running) {
      const sentAt = Date.now();
      try {
        await this.#link.hop(this.#random, 3);
        const assignment = await this.#group.join(this.#link.name, this.#memberId);
        await this.#link.hop(this.#random, 3);
        if (this.#memberId !== undefined && this.#random.chance(this.#faults.lateSyncRate ?? 0)) {
          const lateMs = this.#random.int(500, 12_000);
          this.#note({ sim: 'late sync', replica: this.#link.name, lateMs });
          await sleep(lateMs);
        }
        this.#joins += 1;
        // As in kafkajs: a batch's heartbeat refused while this member was rejoining
        // (its rejoin callback, its join) does not make it join once more; the loop's own
        // next heartbeat finds out whether the group still rebalances.
        this.#rejoin = undefined;
        this.#confirmedAt = sentAt;
        this.#memberId = assignment.memberId;
        this.#assigned = [...assignment.partitions];
        // A new offset manager: each partition's position is read from the group again.
        this.#positions.clear();
        this.#options.onAssignment?.(this.#assigned);
        // After the assignment is told, as with kafkajs, whose join returns (and whose
        // membership is recorded) only after its GROUP_JOIN event.
        this.#generation = assignment.generation;
        return;
      } catch {
        await sleep(this.#random.int(100, 1_000));
      }
    }
  }

  async #run(): Promise<void> {
    let lastHeartbeat = Date.now();
    while (this.#running) {
      await this.#link.reachable();
      if (this.#rejoin !== undefined) {
        const announce = this.#rejoin === 'rebalancing';
        this.#rejoin = undefined;
        if (announce) this.#options.onRebalancing?.({ announced: true });
        // As kafkajs through src/kafka/rejoin-hook.ts: a member that still has its id runs
        // the callback before it rejoins, while the group waits for it.
        if (announce && this.#memberId !== undefined) {
          await this.#options.beforeRejoin?.().catch(() => undefined);
        }
        const late = this.#random.chance(this.#faults.lateFetchRate) ? this.#snapshot() : undefined;
        await this.#join();
        if (late) void this.#lateDelivery(late);
        lastHeartbeat = Date.now();
        continue;
      }
      if (Date.now() - lastHeartbeat >= this.heartbeatIntervalMs) {
        lastHeartbeat = Date.now();
        await this.#heartbeat().catch(() => undefined);
        continue;
      }
      if (this.#paused || this.#assigned.length === 0) {
        await sleep(this.#options.fetchMaxWaitMs ?? 250);
        continue;
      }
      try {
        await this.#link.hop(this.#random, 2);
        this.#broker.check();
        const fetched = await this.#read(this.#snapshot());
        if (fetched.size === 0) {
          await sleep(this.#options.fetchMaxWaitMs ?? 250);
          continue;
        }
        await this.#link.hop(this.#random, 4);
        await this.#deliver(fetched, false);
      } catch {
        this.#rejoin ??= 'silent';
        await sleep(this.#random.int(100, 2_000));
      }
    }
  }

  /**
   * A fetch sent before the rejoin, from the positions then, handed over after it: at
   * once or after the new assignment's own first fetches.
   */
  async #lateDelivery(positions: Map<number, bigint | undefined>): Promise<void> {
    const wait = this.#random.int(0, 300);
    if (wait > 0) await sleep(wait);
    const fetched = await this.#read(positions, false);
    for (const [partition, { records }] of fetched) {
      this.#note({
        sim: 'late fetch',
        replica: this.#link.name,
        partition,
        from: records[0]?.offset,
        to: records[records.length - 1]?.offset,
      });
    }
    await this.#deliver(fetched, true);
  }

  /** Where each assigned partition would be fetched from now. */
  #snapshot(): Map<number, bigint | undefined> {
    return new Map(this.#assigned.map((p) => [p, this.#positions.get(p)]));
  }

  async #read(positions: Map<number, bigint | undefined>, track = true): Promise<Fetched> {
    const fetched: Fetched = new Map();
    for (const [partition, known] of positions) {
      const from = known ?? BigInt(this.#broker.committed(partition)?.offset ?? 0);
      if (known === undefined && track) this.#positions.set(partition, from);
      const read = this.#broker.read(
        partition,
        from,
        this.#random.int(1, this.#faults.maxBatchRecords),
      );
      if (read.records.length === 0) {
        // Only transaction markers: kafkajs steps past them itself, never telling the handler.
        if (track && read.next > from) this.#positions.set(partition, read.next);
        continue;
      }
      const records = read.records.map(({ offset, record }) => ({
        topic: this.#options.topic,
        partition,
        offset: offset.toString(),
        key: Buffer.from(record.key),
        value: Buffer.from(record.value),
        headers: {},
        timestamp: String(record.timestampMs),
      }));
      fetched.set(partition, {
        from,
        next: read.next,
        records,
        seeks: this.#seeks.get(partition) ?? 0,
      });
    }
    return fetched;
  }

  async #deliver(fetched: Fetched, late: boolean): Promise<void> {
    for (const [partition, { from, next, records, seeks }] of fetched) {
      if (!this.#running || this.#paused || !this.#assigned.includes(partition)) continue;
      // A rewind since the fetch went out: its records come again from there.
      if ((this.#seeks.get(partition) ?? 0) !== seeks) continue;
      if (!late && this.#positions.get(partition) !== from) continue;
      const last = records[records.length - 1];
      if (!last) continue;
      this.#positions.set(partition, next);
      const end = this.#broker.endOffset(partition);
      this.#options.onBatch({
        topic: this.#options.topic,
        partition,
        records,
        fetchedFrom: from.toString(),
        nextOffset: next.toString(),
        lag: Math.max(0, Number(end - BigInt(last.offset) - 1n)),
        membership: this.membership,
        heartbeat: () =>
          this.#heartbeat().then(
            () => 'ok' as const,
            (error: unknown) => {
              if (error instanceof Error && error.message === REBALANCING_ERROR) {
                return 'rebalancing' as const;
              }
              throw error;
            },
          ),
        isCurrent: () => this.#running && (this.#seeks.get(partition) ?? 0) === seeks,
        rewind: (offset) => {
          this.#seeks.set(partition, (this.#seeks.get(partition) ?? 0) + 1);
          this.#positions.set(partition, BigInt(offset ?? records[0]?.offset ?? from));
        },
      });
    }
  }

  async #heartbeat(): Promise<void> {
    const sentAt = Date.now();
    await this.#link.hop(this.#random, 2);
    try {
      this.#group.heartbeat(this.#memberId);
    } catch (error: unknown) {
      const message = error instanceof Error ? error.message : String(error);
      this.#rejoin ??= message === REBALANCING_ERROR ? 'rebalancing' : 'silent';
      await this.#link.hop(this.#random, 2);
      throw error;
    }
    await this.#link.hop(this.#random, 2);
    this.#confirmedAt = sentAt;
  }
}
