/**
 * kafkajs's produce retries wait for the requests of the failed attempt to end.
 *
 * kafkajs (2.2.4, `src/producer/sendMessages.js`) sends one Produce request per leader
 * broker and awaits them with `Promise.all`. When one broker's request fails, the
 * attempt rejects at once while the requests to the other brokers are still out, and the
 * retry decides which brokers to send to again before those requests have answered:
 * a broker whose answer is still on its way is sent the same records again. Its records
 * get the next sequence numbers (kafkajs advances a partition's sequence when a request
 * is built and takes it back only when that request fails), so the broker writes them a
 * second time, idempotent producer or not, and inside a transaction both copies commit.
 * Seen on a three-node cluster with leaders killed: one result transaction held 19
 * results twice, 292 ms apart, with consecutive sequence numbers.
 *
 * The workaround wraps kafkajs's factory of that function: every Produce request of a
 * send is counted from the moment it asks for its broker's lock until it releases it
 * (kafkajs records the broker's answer, or takes back the sequence numbers, before the
 * release); a retry of that send, and the send failing in the end, first wait until none
 * of its requests is out. Requests are counted per send (an AsyncLocalStorage carries the
 * send's state into kafkajs's calls), so a producer with sends always in flight does not
 * hold a retry back.
 *
 * kafkajs also keeps its answers per broker, not per partition: a partition one broker
 * acknowledged whose leadership then moved to a broker that has not answered yet is sent
 * again by the retry, under new sequence numbers. So each send also remembers the
 * partitions whose Produce succeeded, and the leaders the retry looks up leave them out.
 * (The opposite case, a partition that moved onto a broker that already answered, is
 * skipped by kafkajs and sent again by acknowledged-send.ts.)
 *
 * Like kafkajs-grouping.ts, it must be in Node's module cache before kafkajs's producer
 * modules load (`./kafkajs.ts` imports it first); `settledRetriesInstalled()` says
 * whether it is.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { createRequire } from 'node:module';
// The grouping replacement must be in place before this module loads kafkajs's
// sendMessages.js, which binds the grouping when it loads: importing it first ensures that.
import { kafkajsProducerFile } from './kafkajs-grouping.ts';

type Retrier = <T>(
  fn: (bail: (error: Error) => void, retryCount: number, retryTime: number) => Promise<T>,
) => Promise<T>;

interface ClusterLike {
  findBroker(query: unknown): Promise<unknown>;
  findLeaderForPartitions(topic: string, partitions: readonly unknown[]): Record<string, unknown[]>;
}

interface EosManagerLike {
  acquireBrokerLock(broker: unknown): Promise<void>;
  releaseBrokerLock(broker: unknown): void;
}

export interface SendMessagesOptions {
  readonly retrier: Retrier;
  readonly eosManager: EosManagerLike;
  readonly [other: string]: unknown;
}

type SendMessages = (request: unknown) => Promise<unknown>;
export type SendMessagesFactory = (options: SendMessagesOptions) => SendMessages;

/** Produce requests of one send that are out, and a way to wait until none is. */
export class RequestsOut {
  #count = 0;
  #waiting: (() => void)[] = [];

  begin(): void {
    this.#count += 1;
  }

  end(): void {
    this.#count -= 1;
    if (this.#count > 0) return;
    const waiting = this.#waiting;
    this.#waiting = [];
    for (const resolve of waiting) resolve();
  }

  settled(): Promise<void> {
    if (this.#count === 0) return Promise.resolve();
    return new Promise((resolve) => this.#waiting.push(resolve));
  }
}

/** What one send knows: its requests out, and the partitions a broker acknowledged. */
interface SendState {
  readonly out: RequestsOut;
  readonly acknowledged: Set<string>;
}

const partitionKey = (topic: string, partition: unknown) => `${topic}\u0000${String(partition)}`;

interface ProduceRequest {
  readonly topicData?: readonly {
    readonly topic: string;
    readonly partitions: readonly { readonly partition: number }[];
  }[];
}

/** `target` with `overrides`; every other function is called on `target` itself. */
function delegating<T extends object>(target: T, overrides: Record<string, unknown>): T {
  return new Proxy(target, {
    get(object, property, _receiver) {
      if (typeof property === 'string' && Object.hasOwn(overrides, property)) {
        return overrides[property];
      }
      const value: unknown = Reflect.get(object, property, object);
      return typeof value === 'function' ? value.bind(object) : value;
    },
  });
}

/** kafkajs's sendMessages factory, with retries and final failures that wait for the requests out. */
export function withSettledRetries(original: SendMessagesFactory): SendMessagesFactory {
  return (options) => {
    const sendOf = new AsyncLocalStorage<SendState>();
    const base = options.eosManager;
    // The producer's own eosManager stays as it is for everything else (transactions,
    // sequence numbers); only the sends made here are counted.
    const eosManager = delegating(base, {
      async acquireBrokerLock(broker: unknown) {
        const out = sendOf.getStore()?.out;
        out?.begin();
        try {
          await base.acquireBrokerLock(broker);
        } catch (error) {
          out?.end();
          throw error;
        }
      },
      releaseBrokerLock(broker: unknown) {
        const out = sendOf.getStore()?.out;
        try {
          base.releaseBrokerLock(broker);
        } finally {
          out?.end();
        }
      },
    });
    const cluster = options.cluster as ClusterLike;
    // One wrapper per broker object: kafkajs keys its answers by the broker object.
    const brokers = new WeakMap<object, object>();
    const wrapBroker = (broker: unknown): unknown => {
      if (typeof broker !== 'object' || broker === null) return broker;
      const known = brokers.get(broker);
      if (known) return known;
      const target = broker as { produce(request: ProduceRequest): Promise<unknown> };
      const wrapped = delegating(target, {
        async produce(request: ProduceRequest) {
          const answer = await target.produce(request);
          // Resolved: every partition of the request was written (kafkajs throws on any
          // partition's error code).
          const acknowledged = sendOf.getStore()?.acknowledged;
          for (const { topic, partitions } of request.topicData ?? []) {
            for (const { partition } of partitions)
              acknowledged?.add(partitionKey(topic, partition));
          }
          return answer;
        },
      });
      brokers.set(broker, wrapped);
      return wrapped;
    };
    const leadersCluster = delegating(cluster, {
      async findBroker(query: unknown) {
        return wrapBroker(await cluster.findBroker(query));
      },
      findLeaderForPartitions(topic: string, partitions: readonly unknown[]) {
        const leaders = cluster.findLeaderForPartitions(topic, partitions);
        const acknowledged = sendOf.getStore()?.acknowledged;
        if (!acknowledged || acknowledged.size === 0) return leaders;
        const left: Record<string, unknown[]> = {};
        for (const [leader, led] of Object.entries(leaders)) {
          const open = led.filter((partition) => !acknowledged.has(partitionKey(topic, partition)));
          if (open.length > 0) left[leader] = open;
        }
        return left;
      },
    });
    const retrier: Retrier = (fn) =>
      options.retrier(async (bail, retryCount, retryTime) => {
        if (retryCount > 0) await sendOf.getStore()?.out.settled();
        return fn(bail, retryCount, retryTime);
      });
    const send = original({ ...options, cluster: leadersCluster, eosManager, retrier });
    return (request) => {
      const state: SendState = { out: new RequestsOut(), acknowledged: new Set() };
      return sendOf.run(state, async () => {
        try {
          return await send(request);
        } catch (error) {
          // Nothing of this send may still land once its caller moves on (aborts its
          // transaction, or sends again).
          await state.out.settled();
          throw error;
        }
      });
    };
  };
}

const require = createRequire(import.meta.url);

const path = kafkajsProducerFile('sendMessages.js');
/** kafkajs's own factory, kept for the test that shows its shortfall. */
export const kafkajsSendMessages: SendMessagesFactory | undefined =
  path === undefined ? undefined : (require(path) as SendMessagesFactory);

const producerModule = kafkajsProducerFile('messageProducer.js');
// Too late once the producer's module holds kafkajs's factory.
const loadedBefore = producerModule === undefined || require.cache[producerModule] !== undefined;
const cached = path === undefined ? undefined : require.cache[path];
const settled = kafkajsSendMessages && withSettledRetries(kafkajsSendMessages);
if (!loadedBefore && cached && settled) cached.exports = settled;

/** Whether kafkajs's producers send through `withSettledRetries`. */
export function settledRetriesInstalled(): boolean {
  return cached !== undefined && !loadedBefore && cached.exports === settled;
}
