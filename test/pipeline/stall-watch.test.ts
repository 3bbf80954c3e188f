import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { test } from 'node:test';
import { createLogger } from '../../src/observability/logger.ts';
import { StallWatch } from '../../src/pipeline/stall-watch.ts';

function watched(stallAfterMs: number) {
  const lines: Record<string, unknown>[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(JSON.parse(chunk.toString('utf8')) as Record<string, unknown>);
      done();
    },
  });
  const ages = new Map<number, number>();
  const watch = new StallWatch({
    logger: createLogger({ level: 'info', destination }),
    stallAfterMs,
    ages: () => ages,
    describe: (partition) => ({ lane: { step: `step of ${partition}` } }),
  });
  return { watch, ages, lines };
}

test('a partition whose oldest uncommitted command waited past the bound is warned about, with what it holds', () => {
  const { watch, ages, lines } = watched(60_000);
  ages.set(0, 59_999).set(1, 0);
  assert.deepEqual(watch.check(), []);
  ages.set(0, 60_000);
  assert.deepEqual(watch.check(), [0]);
  const warning = lines.at(-1);
  assert.equal(warning?.msg, 'partition stalled: commands read and nothing of it committed');
  assert.equal(warning?.partition, 0);
  assert.equal(warning?.waitingMs, 60_000);
  assert.deepEqual(warning?.lane, { step: 'step of 0' });
});

test('a stall is warned about once per bound while it lasts, and its end is said once', () => {
  const { watch, ages, lines } = watched(1_000);
  ages.set(3, 1_500);
  assert.deepEqual(watch.check(), [3]);
  ages.set(3, 2_400);
  assert.deepEqual(watch.check(), [], 'less than another bound since the warning');
  ages.set(3, 2_500);
  assert.deepEqual(watch.check(), [3]);
  ages.set(3, 0);
  assert.deepEqual(watch.check(), []);
  assert.equal(lines.at(-1)?.msg, 'partition moving again: its commands commit');
  assert.equal(
    lines.filter((line) => line.msg === 'partition moving again: its commands commit').length,
    1,
  );
  watch.check();
  assert.equal(lines.length, 3, 'nothing more once it moves');
});

test('a partition no longer owned ends its stall without a word; owned again, it is watched anew', () => {
  const { watch, ages, lines } = watched(1_000);
  ages.set(2, 5_000);
  watch.check();
  ages.delete(2);
  watch.check();
  assert.equal(lines.length, 1);
  ages.set(2, 1_200);
  assert.deepEqual(watch.check(), [2]);
});
