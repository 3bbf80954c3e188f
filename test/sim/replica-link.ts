/**
 * How one simulated replica process reaches the world: up, frozen (SIGSTOP: nothing it
 * does reaches Kafka or the gateway until it is thawed, then everything goes on) or
 * dead (kill -9: nothing it does reaches anything, ever). Every port of a replica
 * passes its requests and answers through here.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { SimRandom } from './sim-random.ts';

export type Health = 'up' | 'frozen' | 'dead';

export class ReplicaLink {
  readonly name: string;
  #health: Health = 'up';
  #thaw: { promise: Promise<void>; resolve: () => void } | undefined;
  readonly #never = new Promise<void>(() => undefined);

  constructor(name: string) {
    this.name = name;
  }

  get health(): Health {
    return this.#health;
  }

  freeze(): void {
    if (this.#health !== 'up') return;
    this.#health = 'frozen';
    let resolve: () => void = () => undefined;
    const promise = new Promise<void>((r) => {
      resolve = r;
    });
    this.#thaw = { promise, resolve };
  }

  thaw(): void {
    if (this.#health !== 'frozen') return;
    this.#health = 'up';
    this.#thaw?.resolve();
    this.#thaw = undefined;
  }

  kill(): void {
    this.#health = 'dead';
    this.#thaw = undefined;
  }

  /** Settles when the replica can act: at once when up, at its thaw when frozen, never when dead. */
  reachable(): Promise<void> {
    if (this.#health === 'up') return Promise.resolve();
    if (this.#health === 'dead') return this.#never;
    return this.#thaw?.promise ?? Promise.resolve();
  }

  /** A network hop of 0–`maxMs` virtual ms, then waits until the replica can act. */
  async hop(random: SimRandom, maxMs: number): Promise<void> {
    await this.reachable();
    const ms = random.int(0, maxMs);
    if (ms > 0) await sleep(ms);
    await this.reachable();
  }
}
