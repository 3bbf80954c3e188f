/**
 * Whether a replica has taken over the partitions of its first assignment: what its
 * readiness waits for, so that a replica started in a rolling deploy reports ready with
 * its partitions fenced, read and covered by an intent, not before. Only the first
 * assignment counts (later rebalances never make a running replica unready); should the
 * group answer again before it is done, the newer assignment is the one waited for.
 * Named transitions: `assigned`, `ended`.
 */
export class FirstTakeovers {
  /** Partitions of the assignment waited for whose preparation has not ended. */
  #pending: Set<number> | undefined;
  #done = false;

  get done(): boolean {
    return this.#done;
  }

  /** The group assigned `partitions`; an empty assignment has nothing to wait for. */
  assigned(partitions: readonly number[]): void {
    if (this.#done) return;
    this.#pending = new Set(partitions);
    if (this.#pending.size === 0) this.#done = true;
  }

  /**
   * The preparation of `partition` in the current assignment ended.
   * @returns true when it was the last one waited for.
   */
  ended(partition: number): boolean {
    if (this.#done || !this.#pending?.delete(partition)) return false;
    if (this.#pending.size > 0) return false;
    this.#done = true;
    return true;
  }
}
