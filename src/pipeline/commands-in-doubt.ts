/**
 * The commands that may have reached the gateway and are not settled yet, counted by the
 * `ferry_commands_in_doubt` gauge: those handed over in doubt (an earlier send may have
 * arrived), those whose send failed in a way the gateway may have processed all the same,
 * and those of a takeover being looked up before they are dispatched. A command stops
 * counting when it is settled or when a lookup proves it unsent.
 */
import type { FerryMetrics } from '../observability/metrics.ts';
import type { Outbound, SendOutcome } from './send-outcome.ts';

export class CommandsInDoubt {
  readonly #metrics: Pick<FerryMetrics, 'commandsInDoubt'>;
  readonly #items = new Set<Outbound>();
  /** Commands of a takeover being looked up, not handed to the dispatcher yet. */
  #lookingUp = 0;

  constructor(metrics: Pick<FerryMetrics, 'commandsInDoubt'>) {
    this.#metrics = metrics;
  }

  /** These may have reached the gateway. */
  add(items: Iterable<Outbound>): void {
    for (const item of items) this.#items.add(item);
    this.#update();
  }

  /** A lookup found these unknown to the gateway: proven unsent, they are no longer in doubt. */
  provenUnsent(items: Iterable<Outbound>): void {
    for (const item of items) this.#items.delete(item);
    this.#update();
  }

  /** Every command's outcome goes through here, exactly once per hand-over. */
  settle(item: Outbound, outcome: SendOutcome): void {
    if (this.#items.delete(item)) this.#update();
    item.settle(outcome);
  }

  /** Counts `count` commands of a takeover in doubt while `lookUp` asks about them. */
  async whileLookingUp<T>(count: number, lookUp: () => Promise<T>): Promise<T> {
    this.#lookingUp += count;
    this.#update();
    try {
      return await lookUp();
    } finally {
      this.#lookingUp -= count;
      this.#update();
    }
  }

  #update(): void {
    this.#metrics.commandsInDoubt.set(this.#items.size + this.#lookingUp);
  }
}
