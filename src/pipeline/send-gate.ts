import type { PauseReason } from './pipeline-control.ts';

/**
 * Open while nothing stops sending; closed for one or more reasons (an operator's
 * pause, an `Access denied` answer). Senders wait on it before every attempt.
 */
export class SendGate {
  readonly #reasons = new Set<PauseReason>();
  #waiters: (() => void)[] = [];
  readonly #listeners: ((reasons: readonly PauseReason[]) => void)[] = [];

  get open(): boolean {
    return this.#reasons.size === 0;
  }

  get reasons(): readonly PauseReason[] {
    return [...this.#reasons];
  }

  /** Calls `listener` with the reasons after every change. */
  onChange(listener: (reasons: readonly PauseReason[]) => void): void {
    this.#listeners.push(listener);
  }

  /** Returns true when this reason was not already set. */
  close(reason: PauseReason): boolean {
    if (this.#reasons.has(reason)) return false;
    this.#reasons.add(reason);
    this.#notify();
    return true;
  }

  /** Clears one reason, or all of them; waiters go on once none is left. */
  release(reason?: PauseReason): void {
    const before = this.#reasons.size;
    if (reason === undefined) this.#reasons.clear();
    else this.#reasons.delete(reason);
    if (this.#reasons.size === before) return;
    this.#notify();
    if (this.#reasons.size === 0) {
      const waiters = this.#waiters;
      this.#waiters = [];
      for (const wake of waiters) wake();
    }
  }

  /** Resolves when the gate is open; rejects with the signal's reason when it aborts first. */
  whenOpen(signal?: AbortSignal): Promise<void> {
    if (this.open) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const onAbort = () => {
        this.#waiters = this.#waiters.filter((w) => w !== wake);
        reject(signal?.reason);
      };
      const wake = () => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      };
      if (signal?.aborted) {
        reject(signal.reason);
        return;
      }
      signal?.addEventListener('abort', onAbort, { once: true });
      this.#waiters.push(wake);
    });
  }

  #notify(): void {
    const reasons = this.reasons;
    for (const listener of this.#listeners) listener(reasons);
  }
}
