/**
 * What the control topic says, folded in offset order: the desired state, the live
 * replicas, the claims on the dead-letter replay and its progress. Every replica folds
 * the same records in the same order, so every replica comes to the same answers
 * (clocks aside: expiry is judged by the reader's clock against the writer's).
 */
import {
  type ControlEntry,
  type DesiredRecord,
  INITIAL_DESIRED,
  type LockClaim,
  type ProgressRecord,
  type ReplicaRecord,
} from './control-records.ts';

/** A claim with the offset of its first record, which orders it against the others. */
export interface PlacedClaim extends LockClaim {
  readonly claimOffset: number;
}

export class FleetView {
  #desired: DesiredRecord = INITIAL_DESIRED;
  readonly #replicas = new Map<string, ReplicaRecord>();
  readonly #claims = new Map<string, PlacedClaim>();
  #progress: ProgressRecord | undefined;

  /** Folds one record read at `offset`. */
  apply(entry: ControlEntry, offset: number): void {
    switch (entry.kind) {
      case 'pipeline':
        this.#desired = entry.record;
        return;
      case 'replica':
        if (entry.record === null) this.#replicas.delete(entry.id);
        else this.#replicas.set(entry.id, entry.record);
        return;
      case 'lock':
        if (entry.record === null) this.#claims.delete(entry.claimId);
        else {
          // A renewal names the offset of the claim's first record: it keeps its place.
          const claimOffset = entry.record.claimOffset ?? offset;
          this.#claims.set(entry.claimId, { ...entry.record, claimOffset });
        }
        return;
      case 'progress':
        this.#progress = entry.record ?? undefined;
        return;
    }
  }

  get desired(): DesiredRecord {
    return this.#desired;
  }

  get progress(): ProgressRecord | undefined {
    return this.#progress;
  }

  /** Replicas whose last record is younger than its time to live, by id. */
  liveReplicas(nowMs: number): ReplicaRecord[] {
    return [...this.#replicas.values()]
      .filter((r) => nowMs <= r.seenAtMs + r.ttlMs)
      .sort((a, b) => a.id.localeCompare(b.id));
  }

  /** Ids of replicas silent for longer than their time to live plus `graceMs`. */
  deadReplicas(nowMs: number, graceMs: number): string[] {
    return [...this.#replicas.values()]
      .filter((r) => nowMs > r.seenAtMs + r.ttlMs + graceMs)
      .map((r) => r.id);
  }

  /**
   * Who holds the replay: of the claims not lapsed, the one whose first record came
   * first. Two replicas that claim at the same instant write two records; the log
   * orders them, and both read the same winner once they have read their own.
   */
  lockHolder(nowMs: number): PlacedClaim | undefined {
    let holder: PlacedClaim | undefined;
    for (const claim of this.#claims.values()) {
      if (claim.expiresAtMs < nowMs) continue;
      if (!holder || claim.claimOffset < holder.claimOffset) holder = claim;
    }
    return holder;
  }

  /** Ids of claims lapsed for longer than `graceMs` (their owner died holding them). */
  lapsedClaims(nowMs: number, graceMs: number): string[] {
    return [...this.#claims.values()]
      .filter((c) => nowMs > c.expiresAtMs + graceMs)
      .map((c) => c.claimId);
  }
}
