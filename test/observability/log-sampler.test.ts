import assert from 'node:assert/strict';
import { test } from 'node:test';
import { FerryError } from '../../src/errors.ts';
import {
  LogSampler,
  type SamplerClock,
  SUPPRESSED_MESSAGE,
} from '../../src/observability/log-sampler.ts';
import { createLogger } from '../../src/observability/logger.ts';
import { jsonLineSink } from '../helpers/log-lines.ts';

/** A clock whose time moves only when the test says so; due timers run in `advance`. */
class FakeClock implements SamplerClock {
  #now = 1_000;
  #timers = new Map<number, { at: number; callback: () => void }>();
  #next = 0;

  now(): number {
    return this.#now;
  }

  setTimer(callback: () => void, ms: number): unknown {
    const handle = ++this.#next;
    this.#timers.set(handle, { at: this.#now + ms, callback });
    return handle;
  }

  clearTimer(handle: unknown): void {
    this.#timers.delete(handle as number);
  }

  get pending(): number {
    return this.#timers.size;
  }

  /** Moves time on by `ms`, running the timers that fall due in order. */
  advance(ms: number): void {
    const until = this.#now + ms;
    for (;;) {
      const due = [...this.#timers.entries()]
        .filter(([, timer]) => timer.at <= until)
        .sort(([, a], [, b]) => a.at - b.at)[0];
      if (!due) break;
      this.#timers.delete(due[0]);
      this.#now = due[1].at;
      due[1].callback();
    }
    this.#now = until;
  }

  /** Moves time on without running timers: a timer that is due but whose turn has not come. */
  jump(ms: number): void {
    this.#now += ms;
  }
}

function sampler(options: { linesPerInterval?: number; intervalMs?: number } = {}) {
  const { destination, lines } = jsonLineSink();
  const clock = new FakeClock();
  const logSampler = new LogSampler({
    logger: createLogger({ destination }),
    linesPerInterval: options.linesPerInterval ?? 3,
    intervalMs: options.intervalMs ?? 60_000,
    clock,
  });
  const summaries = () => lines.filter((line) => line.msg === SUPPRESSED_MESSAGE);
  const plain = (msg: string) => lines.filter((line) => line.msg === msg);
  return { logSampler, clock, lines, summaries, plain };
}

test('the first lines of an interval are written, the rest counted, then one summary when it ends', () => {
  const { logSampler, clock, summaries, plain } = sampler();
  const written: boolean[] = [];
  for (let i = 0; i < 1000; i++) {
    written.push(logSampler.warn('wrong_token', { n: i }, 'wrong token'));
    clock.advance(10);
  }
  assert.deepEqual(
    written.map((w, i) => (w ? i : -1)).filter((i) => i >= 0),
    [0, 1, 2],
  );
  assert.deepEqual(
    plain('wrong token').map((line) => line.n),
    [0, 1, 2],
  );
  // 1000 lines 10 ms apart fit one 60 s interval: nothing summarised before it ends.
  assert.equal(summaries().length, 0);
  clock.advance(60_000);
  const [summary, ...more] = summaries();
  assert.deepEqual(more, []);
  assert.equal(summary?.level, 'warn');
  assert.equal(summary?.kind, 'wrong_token');
  assert.equal(summary?.suppressed, 997);
  assert.equal(summary?.written, 3);
  assert.equal(summary?.intervalMs, 60_000);
  assert.equal(clock.pending, 0, 'no timer is left once the interval ended');
});

test('a steady flood writes at most lines + 1 per interval, and every line is accounted for', () => {
  const { logSampler, clock, lines, summaries } = sampler({
    linesPerInterval: 5,
    intervalMs: 1_000,
  });
  const total = 10_000;
  // One line a millisecond for 10 s: ten full intervals of 1 s.
  for (let i = 0; i < total; i++) {
    logSampler.warn('flood', {}, 'flooded');
    clock.advance(1);
  }
  clock.advance(1_000);
  const written = lines.filter((line) => line.msg === 'flooded').length;
  const suppressed = summaries().reduce((sum, line) => sum + Number(line.suppressed), 0);
  assert.equal(written + suppressed, total);
  assert.equal(written, 50, '5 lines in each of 10 intervals');
  assert.equal(summaries().length, 10, 'one summary per interval');
  assert.ok(lines.length <= 10 * (5 + 1));
});

test('kinds are limited apart: one kind flooding leaves another its own lines', () => {
  const { logSampler, clock, plain, summaries } = sampler({ linesPerInterval: 2 });
  for (let i = 0; i < 100; i++) logSampler.warn('noisy', {}, 'noisy line');
  assert.equal(logSampler.warn('quiet', {}, 'quiet line'), true);
  assert.equal(logSampler.error('quiet-error', {}, 'quiet error'), true);
  assert.equal(plain('noisy line').length, 2);
  assert.equal(plain('quiet line').length, 1);
  assert.equal(plain('quiet error')[0]?.level, 'error');
  clock.advance(60_000);
  assert.deepEqual(
    summaries().map((line) => [line.kind, line.suppressed]),
    [['noisy', 98]],
  );
});

test('the summary has the level of the lines it stands for', () => {
  const { logSampler, clock, summaries } = sampler({ linesPerInterval: 1 });
  logSampler.error('kafka_down', {}, 'unavailable');
  logSampler.error('kafka_down', {}, 'unavailable');
  clock.advance(60_000);
  assert.equal(summaries()[0]?.level, 'error');
});

test('an interval without suppressed lines ends silently, and the next one starts fresh', () => {
  const { logSampler, clock, lines, summaries } = sampler({ linesPerInterval: 3 });
  logSampler.warn('rare', {}, 'rare line');
  logSampler.warn('rare', {}, 'rare line');
  assert.equal(clock.pending, 0, 'no timer while nothing is suppressed');
  clock.advance(60_000);
  for (let i = 0; i < 3; i++) assert.equal(logSampler.warn('rare', {}, 'rare line'), true);
  assert.equal(logSampler.warn('rare', {}, 'rare line'), false);
  assert.equal(lines.length, 5);
  assert.equal(summaries().length, 0);
});

test('a line after the interval ended but before its timer ran ends it first, in order', () => {
  const { logSampler, clock, lines } = sampler({ linesPerInterval: 1 });
  logSampler.warn('k', {}, 'line');
  logSampler.warn('k', {}, 'line');
  clock.jump(60_000);
  assert.equal(logSampler.warn('k', {}, 'line'), true, 'a new interval');
  assert.deepEqual(
    lines.map((line) => [line.msg, line.suppressed]),
    [
      ['line', undefined],
      [SUPPRESSED_MESSAGE, 1],
      ['line', undefined],
    ],
  );
  clock.advance(120_000);
  assert.equal(lines.length, 3, 'the stale timer wrote nothing more');
  assert.equal(clock.pending, 0);
});

test('flush writes the pending summaries at once and clears their timers', () => {
  const { logSampler, clock, summaries } = sampler({ linesPerInterval: 1 });
  logSampler.warn('a', {}, 'a');
  logSampler.warn('a', {}, 'a');
  logSampler.warn('b', {}, 'b');
  logSampler.flush();
  assert.deepEqual(
    summaries().map((line) => [line.kind, line.suppressed]),
    [['a', 1]],
  );
  assert.equal(clock.pending, 0);
  logSampler.flush();
  assert.equal(summaries().length, 1, 'a second flush has nothing to say');
});

test('limits must be positive integers', () => {
  const logger = createLogger({ level: 'silent' });
  for (const bad of [0, -1, 1.5, Number.NaN]) {
    assert.throws(
      () => new LogSampler({ logger, linesPerInterval: bad }),
      (error: unknown) => error instanceof FerryError && error.code === 'config',
    );
    assert.throws(
      () => new LogSampler({ logger, intervalMs: bad }),
      (error: unknown) => error instanceof FerryError && error.code === 'config',
    );
  }
});
