/**
 * Start-up steps that meet a broker going away. kafkajs retries a request whose
 * connection fails only inside some calls: a consumer's `subscribe` refreshes its
 * metadata once, and a connection reset in the middle of it (a broker killed or
 * restarted while a replica starts) fails the whole start. Such a step is tried again
 * here, from a clean state, while the error is one kafkajs marks as passing and a
 * deadline allows; a refusal or a bad setting still fails at once.
 */

/** Whether kafkajs marks the error, or one it wraps, as passing (a retry may succeed). */
export function isRetriableKafkaError(error: unknown, depth = 0): boolean {
  if (typeof error !== 'object' || error === null || depth > 5) return false;
  const record = error as { retriable?: unknown; cause?: unknown; originalError?: unknown };
  if (record.retriable === true) return true;
  return (
    isRetriableKafkaError(record.cause, depth + 1) ||
    isRetriableKafkaError(record.originalError, depth + 1)
  );
}

export interface StartRetryOptions {
  /** How long the step may keep failing with passing errors, ms. Default 60 s. */
  readonly deadlineMs?: number;
  /** Runs after a failed try, before the wait: returns the step to a clean state. */
  readonly undo?: () => Promise<void>;
  /** Told of each failed try that will be tried again (for a warning). */
  readonly onRetry?: (attempt: number, error: unknown) => void;
  /** Waits between tries; injectable for tests. */
  readonly sleep?: (ms: number) => Promise<void>;
  readonly now?: () => number;
}

/**
 * Runs `step` until it succeeds, its error is not a passing one, or the deadline passed
 * (then the last error is thrown). Waits 250 ms, doubling up to 4 s, between tries.
 */
export async function retryWhilePassing<T>(
  step: () => Promise<T>,
  options: StartRetryOptions = {},
): Promise<T> {
  const now = options.now ?? Date.now;
  const sleep =
    options.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  const deadline = now() + (options.deadlineMs ?? 60_000);
  for (let attempt = 1; ; attempt++) {
    try {
      return await step();
    } catch (error: unknown) {
      await options.undo?.().catch(() => undefined);
      if (!isRetriableKafkaError(error) || now() >= deadline) throw error;
      options.onRetry?.(attempt, error);
      await sleep(Math.min(4_000, 250 * 2 ** (attempt - 1)));
    }
  }
}
