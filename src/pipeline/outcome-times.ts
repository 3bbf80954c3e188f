/**
 * When each send outcome became known (its `completed_at`), kept beside the outcome
 * object rather than taken when its result is built. A batch whose commit fails is read
 * again and its results built anew, possibly long after (a broker outage): the result
 * must still say when the send completed, and a copy of the command answered from that
 * outcome while it was on its way must name the same time. Outcomes are objects handed
 * around by reference (carried to a batch read again, awaited by copies), so the first
 * stamp is the one that stays.
 */
const settledAtByOutcome = new WeakMap<object, string>();

/** Notes now as the time `outcome` became known, unless it was noted before. */
export function stampSettled<T extends object | undefined>(outcome: T): T {
  if (outcome !== undefined && !settledAtByOutcome.has(outcome)) {
    settledAtByOutcome.set(outcome, new Date().toISOString());
  }
  return outcome;
}

/** When `outcome` became known (ISO 8601), if it was noted. */
export function settledAt(outcome: object | undefined): string | undefined {
  return outcome === undefined ? undefined : settledAtByOutcome.get(outcome);
}
