/**
 * Where a per-partition mechanism keeps each partition's state: by default a map of its
 * own; in the pipeline, a part of each partition's worker (partition-worker.ts), so that
 * everything held for a partition is in one object.
 */
export interface PartitionStates<S> {
  /** The partition's state, created on first use. */
  get(partition: number): S;
  /** The partition's state if it exists. */
  find(partition: number): S | undefined;
  all(): Iterable<S>;
}

/** States in a map of their own, made by `create`. */
export function ownStates<S>(create: () => S): PartitionStates<S> {
  const states = new Map<number, S>();
  return {
    get(partition) {
      let state = states.get(partition);
      if (state === undefined) {
        state = create();
        states.set(partition, state);
      }
      return state;
    },
    find: (partition) => states.get(partition),
    all: () => states.values(),
  };
}

/** Settles once no partition's state has work running, work begun meanwhile included. */
export async function whenAllIdle(
  states: PartitionStates<{ readonly running: Promise<void> | undefined }>,
): Promise<void> {
  while (true) {
    const running = [...states.all()].flatMap((state) =>
      state.running === undefined ? [] : [state.running],
    );
    if (running.length === 0) return;
    await Promise.all(running);
  }
}
