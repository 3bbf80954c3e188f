/**
 * ferry's own bounds on kafkajs's retries. kafkajs waits longer after each failed try,
 * up to 30 s by default: a broker back after a restart then stayed unused for as long as
 * the wait that had begun (lag drained up to 35 s after the broker returned). Each wait
 * here is capped at {@link MAX_RETRY_WAIT_MS}, and the count of tries is raised so that
 * the patience in all stays what it was.
 */

/** The longest wait between two tries: a broker that is back is used again within it. */
export const MAX_RETRY_WAIT_MS = 2_000;

export interface RetryOptions {
  readonly initialRetryTime: number;
  readonly multiplier: number;
  readonly maxRetryTime: number;
  readonly factor: number;
  readonly retries: number;
}

/** kafkajs's randomisation of each wait (±20 %), its default. */
const FACTOR = 0.2;

/**
 * Waits starting at `initialRetryTime` ms, growing by `multiplier`, each capped at
 * MAX_RETRY_WAIT_MS, as many as it takes for their sum (on average) to reach `patienceMs`.
 */
export function boundedRetry(
  initialRetryTime: number,
  multiplier: number,
  patienceMs: number,
): RetryOptions {
  let retries = 0;
  let total = 0;
  for (let wait = initialRetryTime; total < patienceMs; retries++) {
    total += wait;
    wait = Math.min(wait * multiplier, MAX_RETRY_WAIT_MS);
  }
  return { initialRetryTime, multiplier, maxRetryTime: MAX_RETRY_WAIT_MS, factor: FACTOR, retries };
}

/** Admin calls, consumers and plain producers: 300 ms doubling up to 2 s, about a minute in all. */
export const CLIENT_RETRY = boundedRetry(300, 2, 60_000);

/**
 * How old a consumer's metadata may be when it fetches again, ms. A fetch from a leader
 * that died fails with a connection error, which kafkajs retries with the metadata it
 * has: it refreshes it after other errors, or once it is older than this. 5 s instead of
 * kafkajs's 5 minutes, so a dead leader's partitions are fetched from their new leader
 * within seconds of the move; the cost is one metadata request per consumer per 5 s.
 */
export const CONSUMER_METADATA_MAX_AGE_MS = 5_000;
