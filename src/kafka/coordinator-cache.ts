/**
 * Remembers which broker coordinates a transactional id or a consumer group.
 *
 * kafkajs sends FindCoordinator before every request to a coordinator: one transaction
 * (AddPartitionsToTxn, AddOffsetsToTxn, TxnOffsetCommit, EndTxn, and every retry of
 * the first after CONCURRENT_TRANSACTIONS) costs four or more extra round trips, each
 * awaited before the request it precedes. The Java client keeps the coordinator until
 * a request to it fails; so does this cache, installed on the clusters one kafkajs
 * instance creates. An entry is dropped when a request to the broker fails for any
 * reason but a protocol error unrelated to coordination (CONCURRENT_TRANSACTIONS, a
 * fencing), and after `ttlMs` whatever happens, so a coordinator that moved without
 * a failed request is found again soon.
 */
import { COORDINATOR_MOVING_TYPES } from './coordinator-errors.ts';
import type { Kafka } from './kafkajs.ts';

/** How long a coordinator is trusted without a failed request to it. */
export const COORDINATOR_TTL_MS = 10_000;

/** Whether a failed request leaves the coordinator it went to in doubt. */
export function doubtsCoordinator(error: unknown): boolean {
  // Broker answers carry the protocol error's type; connection errors, request
  // timeouts and anything unknown have none.
  const { type } = (error ?? {}) as { type?: unknown };
  return typeof type !== 'string' || COORDINATOR_MOVING_TYPES.has(type);
}

/** Coordinator node ids by (coordinator type, group or transactional id), each for a while. */
export class CoordinatorCache {
  readonly #ttlMs: number;
  readonly #now: () => number;
  readonly #entries = new Map<string, { readonly nodeId: number; readonly until: number }>();

  constructor(ttlMs = COORDINATOR_TTL_MS, now: () => number = Date.now) {
    this.#ttlMs = ttlMs;
    this.#now = now;
  }

  /** The remembered coordinator, unless it is older than the TTL. */
  lookup(key: string): number | undefined {
    const entry = this.#entries.get(key);
    if (entry === undefined) return undefined;
    if (this.#now() >= entry.until) {
      this.#entries.delete(key);
      return undefined;
    }
    return entry.nodeId;
  }

  remember(key: string, nodeId: number): void {
    this.#entries.set(key, { nodeId, until: this.#now() + this.#ttlMs });
  }

  forget(key: string): void {
    this.#entries.delete(key);
  }

  get size(): number {
    return this.#entries.size;
  }
}

/** The parts of kafkajs's (internal) Cluster and Broker this relies on. */
interface KafkajsBroker {
  readonly nodeId: number;
}
interface CoordinatorQuery {
  readonly groupId: string;
  readonly coordinatorType?: number;
}
interface KafkajsCluster {
  findGroupCoordinator(query: CoordinatorQuery): Promise<KafkajsBroker>;
  findBroker(query: { nodeId: number }): Promise<KafkajsBroker>;
}
type ClusterFactory = (...args: unknown[]) => KafkajsCluster;

/** kafkajs keeps its cluster factory under this symbol's description, on each instance. */
const CREATE_CLUSTER = 'private:Kafka:createCluster';

/**
 * Makes every cluster `kafka` creates from now on (one per producer, consumer or admin)
 * remember its coordinators. @throws Error when kafkajs no longer has the hook.
 */
export function cacheCoordinators(kafka: Kafka, ttlMs = COORDINATOR_TTL_MS): void {
  const holder = kafka as unknown as Record<symbol, unknown>;
  const key = Object.getOwnPropertySymbols(holder).find((s) => s.description === CREATE_CLUSTER);
  const create = key === undefined ? undefined : holder[key];
  if (key === undefined || typeof create !== 'function') {
    throw new Error('kafkajs has no cluster factory to install the coordinator cache on');
  }
  const factory = create as ClusterFactory;
  holder[key] = (...args: unknown[]) => {
    const cluster = factory(...args);
    installCache(cluster, new CoordinatorCache(ttlMs));
    return cluster;
  };
}

function installCache(cluster: KafkajsCluster, cache: CoordinatorCache): void {
  const find = cluster.findGroupCoordinator.bind(cluster);
  cluster.findGroupCoordinator = async (query: CoordinatorQuery) => {
    const key = `${query.coordinatorType ?? 0}:${query.groupId}`;
    const nodeId = cache.lookup(key);
    if (nodeId !== undefined) {
      try {
        return forgettingOnFailure(await cluster.findBroker({ nodeId }), () => cache.forget(key));
      } catch {
        // Not reachable (or no longer known): looked up afresh below.
        cache.forget(key);
      }
    }
    const broker = await find(query);
    cache.remember(key, broker.nodeId);
    return forgettingOnFailure(broker, () => cache.forget(key));
  };
}

/**
 * The broker as kafkajs uses it, except that a request to it failing in a way that
 * doubts the coordinator drops the cache entry first.
 */
function forgettingOnFailure<T extends object>(broker: T, forget: () => void): T {
  return new Proxy(broker, {
    get(target, property) {
      const value: unknown = Reflect.get(target, property, target);
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        const onFailure = (error: unknown) => {
          if (doubtsCoordinator(error)) forget();
          throw error;
        };
        try {
          const returned: unknown = value.apply(target, args);
          return returned instanceof Promise ? returned.catch(onFailure) : returned;
        } catch (error: unknown) {
          return onFailure(error);
        }
      };
    },
  });
}
