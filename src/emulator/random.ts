import { randomInt } from 'node:crypto';

/** A source of uniform numbers in [0, 1). */
export type Random = () => number;

/**
 * A small, fast pseudo-random generator (mulberry32). Seeded, it repeats the same
 * sequence on every run, so a test or a chaos run that fixes `seed` sees the same
 * fault pattern; unseeded, it starts from a random seed.
 */
export function createRandom(seed?: number): Random {
  let state = (seed ?? randomInt(0, 2 ** 32 - 1)) >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** An integer in [min, max], both inclusive. */
export function randomIntBetween(random: Random, min: number, max: number): number {
  return min + Math.floor(random() * (max - min + 1));
}
