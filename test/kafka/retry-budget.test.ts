/**
 * ferry's bounds on kafkajs's retries: every wait at most MAX_RETRY_WAIT_MS (a broker back
 * after a restart is used again within it), and about a minute of patience in all, as
 * before the cap. The schedule is replayed the way kafkajs's retrier computes it.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { TRANSACTION_RETRY } from '../../src/kafka/producers.ts';
import {
  boundedRetry,
  CLIENT_RETRY,
  MAX_RETRY_WAIT_MS,
  type RetryOptions,
} from '../../src/kafka/retry-budget.ts';

/** The waits kafkajs's retrier would make, with its randomisation at `at` (0 low, 1 high). */
function waits(options: RetryOptions, at: number): number[] {
  const randomised = (time: number) => time * (1 - options.factor + 2 * options.factor * at);
  const out: number[] = [];
  let wait = randomised(options.initialRetryTime);
  for (let i = 0; i < options.retries; i++) {
    out.push(wait);
    wait = Math.min(randomised(wait) * options.multiplier, options.maxRetryTime);
  }
  return out;
}

for (const [name, options] of [
  ['CLIENT_RETRY', CLIENT_RETRY],
  ['TRANSACTION_RETRY', TRANSACTION_RETRY],
] as const) {
  test(`${name}: no wait over ${MAX_RETRY_WAIT_MS} ms, about a minute in all`, () => {
    for (const at of [0, 0.5, 1]) {
      const schedule = waits(options, at);
      assert.ok(Math.max(...schedule) <= MAX_RETRY_WAIT_MS, `${Math.max(...schedule)} ms`);
    }
    // At the mean of the randomisation (kafkajs draws each wait anew, so it averages out).
    const total = waits(options, 0.5).reduce((sum, wait) => sum + wait, 0);
    assert.ok(total >= 55_000 && total <= 65_000, `${total} ms in all`);
  });
}

test('boundedRetry counts the tries a patience takes', () => {
  assert.equal(boundedRetry(300, 2, 300).retries, 1);
  assert.equal(boundedRetry(300, 2, 2_100).retries, 3);
  assert.equal(boundedRetry(300, 2, 4_100).retries, 4);
  assert.equal(boundedRetry(300, 2, 60_000).maxRetryTime, MAX_RETRY_WAIT_MS);
});
