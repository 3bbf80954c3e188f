/** Waits that end early when a rebalance starts (an AbortSignal), so a batch can return. */
import { setTimeout as sleep } from 'node:timers/promises';

/** `value`, or undefined as soon as `signal` aborts (whatever `value` does later is ignored). */
export function unlessAborted<T>(value: Promise<T>, signal: AbortSignal): Promise<T | undefined> {
  if (signal.aborted) return Promise.resolve(undefined);
  return new Promise((resolve, reject) => {
    const onAbort = () => resolve(undefined);
    signal.addEventListener('abort', onAbort, { once: true });
    value.then(
      (result) => {
        signal.removeEventListener('abort', onAbort);
        resolve(result);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}

/** Waits `ms`; false when `signal` aborted the wait. */
export async function pause(ms: number, signal: AbortSignal): Promise<boolean> {
  if (ms <= 0) return !signal.aborted;
  try {
    await sleep(ms, undefined, { signal });
    return true;
  } catch {
    return false;
  }
}
