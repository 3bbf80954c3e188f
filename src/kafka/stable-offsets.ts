/**
 * A group's committed offsets read stable: OffsetFetch v7 with `require_stable`, which the
 * group coordinator answers UNSTABLE_OFFSET_COMMIT for a partition while an open
 * transaction holds an offset of it (added, not yet committed or aborted, markers not yet
 * written). The partition's new owner reads its offset this way when the previous owner
 * committed through a transactional id of its own rather than the partition's: nothing
 * else waits for that owner's last transaction to end. kafkajs's `admin.fetchOffsets`
 * (OffsetFetch v4 at most) answers the last committed offset at once, in the middle of a
 * transaction that is about to move it.
 *
 * Partitions answered UNSTABLE are asked again after a short wait (the markers of an
 * ended transaction take milliseconds); a transaction that stays open, its producer
 * frozen, holds the partition until the broker aborts it at its transaction timeout, so
 * the wait is bounded by the caller.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { FerryError } from '../errors.ts';
import { whileCoordinatorMoves } from './coordinator-errors.ts';
import {
  offsetFetchV7,
  type ProtocolRequest,
  protocolError,
  type StableOffset,
} from './group-fenced-offsets.ts';
import type { PartitionOffset } from './kafka-port.ts';
import { kafkaError } from './kafka-security.ts';
import type { Kafka } from './kafkajs.ts';
import { newCluster } from './kafkajs-cluster.ts';

/** The protocol's code of a partition an open transaction holds an offset of. */
export const UNSTABLE_OFFSET_COMMIT = 88;

/** The first wait before an unstable partition is asked again, ms; it grows by half. */
const FIRST_WAIT_MS = 5;
/** The longest wait between two questions, ms. */
const LONGEST_WAIT_MS = 500;

interface CoordinatorBroker {
  readonly connectionPool: { send<T>(request: ProtocolRequest<T>): Promise<T> };
  /** The versions the broker reads, by API key (kafkajs fills it on connect). */
  readonly versions?: Readonly<Record<number, { readonly maxVersion: number } | undefined>>;
}

/** OffsetFetch's API key, and the version that carries require_stable (Kafka 2.5). */
const OFFSET_FETCH = 9;
const REQUIRE_STABLE_VERSION = 7;
interface StableCluster {
  connect(): Promise<void>;
  disconnect(): Promise<void>;
  findGroupCoordinator(query: { groupId: string }): Promise<CoordinatorBroker>;
}

/** The waits between questions about a partition still held: 5 ms growing by half, at most 500. */
export function stableRetryWaitMs(attempt: number): number {
  return Math.min(LONGEST_WAIT_MS, Math.ceil(FIRST_WAIT_MS * 1.5 ** attempt));
}

/** Reads offsets stable over one connection to the cluster, opened on first use. */
export class StableOffsetReader {
  readonly #kafka: Kafka;
  #cluster: Promise<StableCluster> | undefined;

  constructor(kafka: Kafka) {
    this.#kafka = kafka;
  }

  /**
   * The committed offsets (and metadata) of `partitions` of `topic`, each once no open
   * transaction holds it; `-1` for a partition the group never committed. Undefined when
   * the group's coordinator is older than Kafka 2.5 and cannot be asked this way.
   * @throws FerryError `kafka` (retryable) when a transaction still holds one after
   *   `waitMs`, or when the coordinator cannot be asked.
   */
  async read(
    groupId: string,
    topic: string,
    partitions: readonly number[],
    waitMs: number,
  ): Promise<Map<number, PartitionOffset> | undefined> {
    const deadline = Date.now() + waitMs;
    const stable = new Map<number, PartitionOffset>();
    let held = [...partitions];
    for (let attempt = 0; held.length > 0; attempt++) {
      const answered = await this.#fetch(groupId, topic, held);
      if (answered === undefined) return undefined;
      const stillHeld: number[] = [];
      for (const partition of held) {
        const answer = answered.get(partition);
        if (answer === undefined) {
          throw new FerryError('kafka', `the offset of ${topic}/${partition} was not answered`);
        }
        if (answer.errorCode === UNSTABLE_OFFSET_COMMIT) {
          stillHeld.push(partition);
          continue;
        }
        if (answer.errorCode !== 0) {
          throw kafkaError(
            protocolError(answer.errorCode),
            `reading the offset of ${topic}/${partition} failed`,
          );
        }
        stable.set(partition, {
          topic,
          partition,
          offset: answer.offset,
          metadata: answer.metadata,
        });
      }
      held = stillHeld;
      if (held.length === 0) break;
      const waitFor = stableRetryWaitMs(attempt);
      if (Date.now() + waitFor > deadline) {
        throw new FerryError(
          'kafka',
          `the offsets of ${topic} partitions ${held.join(', ')} are still held by an open transaction after ${waitMs} ms`,
        );
      }
      await sleep(waitFor);
    }
    return stable;
  }

  async #fetch(
    groupId: string,
    topic: string,
    partitions: readonly number[],
  ): Promise<Map<number, StableOffset> | undefined> {
    try {
      const answer = await whileCoordinatorMoves(async () => {
        const cluster = await this.#connected();
        const coordinator = await cluster.findGroupCoordinator({ groupId });
        const highest = coordinator.versions?.[OFFSET_FETCH]?.maxVersion;
        if (highest !== undefined && highest < REQUIRE_STABLE_VERSION) return undefined;
        return coordinator.connectionPool.send(
          offsetFetchV7({ groupId, topics: [{ topic, partitions }], requireStable: true }),
        );
      });
      if (answer === undefined) return undefined;
      const answered = answer.topics.find((t) => t.topic === topic)?.partitions ?? [];
      return new Map(answered.map((p) => [p.partition, p]));
    } catch (error: unknown) {
      // The cluster stays: other partitions may be reading through it this moment, and
      // kafkajs connects a broker again when it is next asked.
      throw kafkaError(error, `reading the stable offsets of ${topic} failed`);
    }
  }

  #connected(): Promise<StableCluster> {
    if (!this.#cluster) {
      const cluster = newCluster(this.#kafka) as unknown as StableCluster;
      const connected = cluster.connect().then(() => cluster);
      connected.catch(() => {
        if (this.#cluster === connected) this.#cluster = undefined;
      });
      this.#cluster = connected;
    }
    return this.#cluster;
  }

  async close(): Promise<void> {
    const cluster = this.#cluster;
    this.#cluster = undefined;
    await cluster?.then((c) => c.disconnect()).catch(() => undefined);
  }
}
