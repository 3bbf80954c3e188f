/**
 * The simulator's one source of choices: every delay, fault and interleaving of a run is
 * drawn from here, so a seed replays the same run exactly.
 */
import { createRandom } from '../../src/emulator/random.ts';

export class SimRandom {
  readonly #next: () => number;

  constructor(seed: number) {
    this.#next = createRandom(seed);
  }

  /** A uniform number in [0, 1). */
  next(): number {
    return this.#next();
  }

  /** True with probability `p`. */
  chance(p: number): boolean {
    return this.#next() < p;
  }

  /** An integer in [min, max], both inclusive. */
  int(min: number, max: number): number {
    return min + Math.floor(this.#next() * (max - min + 1));
  }

  pick<T>(items: readonly T[]): T {
    const item = items[Math.floor(this.#next() * items.length)];
    if (item === undefined) throw new Error('pick from an empty list');
    return item;
  }

  /** A child generator, so one part's extra draws do not shift another's. */
  fork(): SimRandom {
    return new SimRandom(Math.floor(this.#next() * 2 ** 32));
  }
}
