/**
 * This replica's standing in the consumer group, shared by all its partitions: a
 * generation that counts rebalances (work of an older one stops sending and waiting, its
 * abort signal fires), an assignment that counts the group's answers (what a takeover
 * learned holds until the next one; answers still awaited for batches handed out under an
 * older one stop being awaited, its own signal fires), the partitions of the last answer
 * and the member id it came with, and whether a rebalance is under way (started, not yet
 * answered), and whether sends handed out earlier may still go (`sendsContinue`). Named
 * transitions: `rebalanceStarted`, `assigned`.
 */
export class GroupLease {
  #owned = new Set<number>();
  #generation = 0;
  #assignment = 0;
  #memberId: string | undefined;
  #abort = new AbortController();
  #answered = new AbortController();
  #rebalancing = false;
  /** The generation a failed heartbeat or a fencing last began (not an announced rebalance). */
  #doubtedIn = 0;

  /** Counts rebalances (and suspected losses of membership). */
  get generation(): number {
    return this.#generation;
  }

  /** Counts assignments received from the group. */
  get assignment(): number {
    return this.#assignment;
  }

  /** Aborted as soon as the generation changes. */
  get signal(): AbortSignal {
    return this.#abort.signal;
  }

  /**
   * Aborted when the group answers (a new assignment). Until then a rebalance leaves the
   * partitions here: a batch whose answers arrive meanwhile can still commit them.
   */
  get answeredSignal(): AbortSignal {
    return this.#answered.signal;
  }

  /**
   * The group announced a rebalance (kafkajs's REBALANCING) and has not answered since.
   * A heartbeat that failed or a fencing bumps the generation without it: kafkajs does
   * not rejoin for those.
   */
  get rebalancing(): boolean {
    return this.#rebalancing;
  }

  /**
   * A rebalance started, a heartbeat failed, or this member found itself out of the
   * group: its partitions may be another replica's already. Work in progress stops.
   */
  rebalanceStarted({ announced = false }: { announced?: boolean } = {}): void {
    this.#generation += 1;
    if (announced) this.#rebalancing = true;
    else this.#doubtedIn = this.#generation;
    this.#abort.abort();
    this.#abort = new AbortController();
  }

  /**
   * The group assigned `partitions` to member `memberId`.
   * @returns whether the member id changed since the last assignment (the member was
   *   expelled and taken back: every producer must be initialised again).
   */
  assigned(partitions: readonly number[], memberId: string | undefined): { rejoined: boolean } {
    const rejoined = this.#memberId !== undefined && memberId !== this.#memberId;
    this.#memberId = memberId;
    this.#assignment += 1;
    this.#owned = new Set(partitions);
    this.#rebalancing = false;
    this.#answered.abort();
    this.#answered = new AbortController();
    return { rejoined };
  }

  /**
   * Whether sends handed out in `generation` of `assignment` may still go out: nothing
   * happened since, or only a rebalance the group announced and has not answered. Until
   * it answers, the partitions stay with this member (eager rebalancing revokes them at
   * the rejoin, and the rejoin waits for what is in flight to settle), so the envelopes
   * of a batch already handed out all go: given up halfway, the batch could not commit,
   * and its partition's next owner would wait out the sends that did go. A failed
   * heartbeat or a fencing since then stops them (the membership itself is in doubt).
   */
  sendsContinue(generation: number, assignment: number): boolean {
    if (generation === this.#generation) return true;
    return this.#rebalancing && assignment === this.#assignment && this.#doubtedIn <= generation;
  }

  /** Whether this member was assigned the partition last. */
  owns(partition: number): boolean {
    return this.#owned.has(partition);
  }

  /**
   * Whether work begun in `assignment` may still commit or send for the partition: the
   * group has not answered since, and it left the partition here.
   */
  holds(partition: number, assignment: number): boolean {
    return assignment === this.#assignment && this.#owned.has(partition);
  }
}
