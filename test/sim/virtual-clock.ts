/**
 * Virtual time for one simulated run. Node runs one event loop: when nothing in the
 * process touches real I/O and every timer is virtual, the order of the core's steps is
 * decided only by the timers and promises the simulator hands out. The global timer
 * API (setTimeout, setInterval, setImmediate, node:timers/promises, Date,
 * performance.now) is replaced by @sinonjs/fake-timers for the run, and Math.random by
 * the run's seeded generator (the dispatcher's backoff jitter draws from it).
 */
import { syncBuiltinESMExports } from 'node:module';
import { install } from '@sinonjs/fake-timers';

type InstalledClock = ReturnType<typeof install>;

import type { SimRandom } from './sim-random.ts';

/** 2026-01-01T00:00:00Z: virtual runs start at a fixed wall-clock time. */
const EPOCH_MS = Date.UTC(2026, 0, 1);

export class VirtualClock {
  readonly #clock: InstalledClock;
  readonly #random: () => number;

  private constructor(clock: InstalledClock, random: () => number) {
    this.#clock = clock;
    this.#random = random;
  }

  /** Replaces the global clock and Math.random until `uninstall`. */
  static install(random: SimRandom): VirtualClock {
    const clock = install({
      now: EPOCH_MS,
      toFake: [
        'setTimeout',
        'clearTimeout',
        'setInterval',
        'clearInterval',
        'setImmediate',
        'clearImmediate',
        'Date',
        'performance',
      ],
      loopLimit: 1_000_000,
    });
    // ESM importers of node:timers/promises see the fake only after this.
    syncBuiltinESMExports();
    const originalRandom = Math.random;
    Math.random = () => random.next();
    return new VirtualClock(clock, originalRandom);
  }

  /** Virtual ms since the run began. */
  get elapsedMs(): number {
    return this.#clock.now - EPOCH_MS;
  }

  /**
   * Fires timers one at a time, in virtual-time order, letting every promise settle
   * between them, until `done()` holds or `limitMs` of virtual time have passed.
   * @returns whether `done()` held.
   */
  async runUntil(done: () => boolean, limitMs: number): Promise<boolean> {
    const until = this.#clock.now + limitMs;
    // A timer at the limit: the loop below never steps past it, and never runs dry.
    const limit = setTimeout(() => undefined, limitMs);
    try {
      while (!done() && this.#clock.now < until) await this.#clock.nextAsync();
      return done();
    } finally {
      clearTimeout(limit);
    }
  }

  /** Lets `ms` of virtual time pass, firing what falls due. */
  async advance(ms: number): Promise<void> {
    await this.runUntil(() => false, ms);
  }

  uninstall(): void {
    this.#clock.uninstall();
    syncBuiltinESMExports();
    Math.random = this.#random;
  }
}
