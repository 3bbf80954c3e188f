/**
 * What the control topic says, folded in offset order: the desired state, the live
 * replicas, the claims on the dead-letter replay and its progress. Every replica folds
 * the same records in the same order, so every replica comes to the same answers.
 *
 * Expiry never compares two machines' clocks: a replica record or a claim lives for its
 * time to live from when this reader received it, on this reader's clock alone (a writer
 * whose clock is off by an hour expires like any other). The price: a record read while
 * catching up at start counts as just received, so a replica that died shortly before
 * looks live, and its claim held, for at most one time to live after this reader starts
 * (the safe side for the replay lock: no second holder, only a later one).
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
  /** When it lapses unless renewed, on this reader's clock. */
  readonly lapsesAtMs: number;
}

/** A replica record and when this reader received it (its own clock). */
interface SeenReplica {
  readonly record: ReplicaRecord;
  readonly receivedAtMs: number;
}

export class FleetView {
  #desired: DesiredRecord = INITIAL_DESIRED;
  readonly #replicas = new Map<string, SeenReplica>();
  readonly #claims = new Map<string, PlacedClaim>();
  #progress: ProgressRecord | undefined;

  /** Folds one record read at `offset`, received at `receivedAtMs` (this reader's clock). */
  apply(entry: ControlEntry, offset: number, receivedAtMs: number): void {
    switch (entry.kind) {
      case 'pipeline':
        this.#desired = entry.record;
        return;
      case 'replica':
        if (entry.record === null) this.#replicas.delete(entry.id);
        else this.#replicas.set(entry.id, { record: entry.record, receivedAtMs });
        return;
      case 'lock':
        if (entry.record === null) this.#claims.delete(entry.claimId);
        else {
          // A renewal names the offset of the claim's first record: it keeps its place.
          const claimOffset = entry.record.claimOffset ?? offset;
          // A claim written without its time to live (an older ferry) keeps the writer's
          // expiry, and so its clock.
          const { ttlMs } = entry.record;
          const lapsesAtMs = ttlMs === undefined ? entry.record.expiresAtMs : receivedAtMs + ttlMs;
          this.#claims.set(entry.claimId, { ...entry.record, claimOffset, lapsesAtMs });
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

  /** Replicas whose last record was received less than its time to live ago, by id. */
  liveReplicas(nowMs: number): ReplicaRecord[] {
    return [...this.#replicas.values()]
      .filter(({ record, receivedAtMs }) => nowMs <= receivedAtMs + record.ttlMs)
      .map(({ record }) => record)
      .sort((a, b) => a.id.localeCompare(b.id));
  }

  /** Ids of replicas silent for longer than their time to live plus `graceMs`. */
  deadReplicas(nowMs: number, graceMs: number): string[] {
    return [...this.#replicas.values()]
      .filter(({ record, receivedAtMs }) => nowMs > receivedAtMs + record.ttlMs + graceMs)
      .map(({ record }) => record.id);
  }

  /**
   * Who holds the replay: of the claims not lapsed, the one whose first record came
   * first. Two replicas that claim at the same instant write two records; the log
   * orders them, and both read the same winner once they have read their own.
   */
  lockHolder(nowMs: number): PlacedClaim | undefined {
    let holder: PlacedClaim | undefined;
    for (const claim of this.#claims.values()) {
      if (claim.lapsesAtMs < nowMs) continue;
      if (!holder || claim.claimOffset < holder.claimOffset) holder = claim;
    }
    return holder;
  }

  /** Ids of claims lapsed for longer than `graceMs` (their owner died holding them). */
  lapsedClaims(nowMs: number, graceMs: number): string[] {
    return [...this.#claims.values()]
      .filter((c) => nowMs > c.lapsesAtMs + graceMs)
      .map((c) => c.claimId);
  }
}
