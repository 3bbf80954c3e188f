/**
 * The records of the control topic (README, Fleet control): small JSON values with a
 * format version `v`, under four kinds of key. Parsing is strict: a record this
 * version cannot read is reported and skipped, never half-applied.
 *
 * - `pipeline`: the fleet's desired state.
 * - `replica/<id>`: one replica's state, refreshed every 2 s; a tombstone at clean stop.
 * - `replay-lock/<claim id>`: a claim on the dead-letter replay; a tombstone releases it.
 * - `replay-progress`: the last (or running) dead-letter replay.
 */
import type { DesiredConsumption } from '../pipeline/consumption-mode.ts';
import type { PipelineState } from '../pipeline/pipeline-control.ts';

export const RECORD_FORMAT = 1;

export const PIPELINE_KEY = 'pipeline';
export const REPLICA_PREFIX = 'replica/';
export const LOCK_PREFIX = 'replay-lock/';
export const PROGRESS_KEY = 'replay-progress';

export interface DesiredRecord {
  readonly desired: DesiredConsumption;
  /** One more than the version it replaced; 0 means none was ever written. */
  readonly version: number;
  readonly reason: string;
  readonly by: string;
  /** ISO 8601 UTC. */
  readonly at: string;
}

/** Before anything was written: running, version 0. */
export const INITIAL_DESIRED: DesiredRecord = {
  desired: 'running',
  version: 0,
  reason: '',
  by: '',
  at: '',
};

export interface ReplicaRecord {
  readonly id: string;
  /** ferry's package version. */
  readonly version: string;
  /** When this record was written (ms since the epoch, the writer's clock; shown, never compared). */
  readonly seenAtMs: number;
  /** Readers drop the replica this long after they received its last record (their own clock). */
  readonly ttlMs: number;
  readonly appliedVersion: number;
  readonly appliedAtMs: number;
  readonly state: PipelineState;
}

export interface LockClaim {
  readonly claimId: string;
  /** The replica that claims. */
  readonly owner: string;
  /** The claim lapses at this time (ms since the epoch, the writer's clock) unless renewed. */
  readonly expiresAtMs: number;
  /**
   * How long it lives unless renewed: readers count it from when they received the
   * record, on their own clock. Absent from claims of older ferry versions.
   */
  readonly ttlMs?: number;
  /** Offset of the claim's first record; absent in that first record itself. */
  readonly claimOffset?: number;
}

export type ReplayPhase = 'running' | 'finished' | 'failed';

export interface ProgressRecord {
  readonly owner: string;
  readonly claimId: string;
  readonly state: ReplayPhase;
  readonly replayed: number;
  readonly scanned: number;
  readonly skipped: number;
  readonly alreadyReplayed: number;
  readonly startedAtMs: number;
  readonly updatedAtMs: number;
  readonly error?: string;
}

export type ControlEntry =
  | { readonly kind: 'pipeline'; readonly record: DesiredRecord }
  | { readonly kind: 'replica'; readonly id: string; readonly record: ReplicaRecord | null }
  | { readonly kind: 'lock'; readonly claimId: string; readonly record: LockClaim | null }
  | { readonly kind: 'progress'; readonly record: ProgressRecord | null };

/** A record this version cannot read. */
export class ControlRecordError extends Error {
  override name = 'ControlRecordError';
}

const desiredStates: readonly string[] = ['running', 'paused', 'draining'];

function object(value: string): Record<string, unknown> {
  const parsed: unknown = JSON.parse(value);
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new ControlRecordError('not a JSON object');
  }
  const record = parsed as Record<string, unknown>;
  if (record.v !== RECORD_FORMAT) {
    throw new ControlRecordError(`format ${String(record.v)} is not ${RECORD_FORMAT}`);
  }
  return record;
}

function field<T>(record: Record<string, unknown>, name: string, type: string): T {
  const value = record[name];
  if (typeof value !== type) throw new ControlRecordError(`${name}: must be a ${type}`);
  return value as T;
}

function parseDesired(value: string): DesiredRecord {
  const record = object(value);
  const desired = field<string>(record, 'desired', 'string');
  if (!desiredStates.includes(desired)) {
    throw new ControlRecordError(`desired: must be one of ${desiredStates.join(', ')}`);
  }
  return {
    desired: desired as DesiredConsumption,
    version: field<number>(record, 'version', 'number'),
    reason: field<string>(record, 'reason', 'string'),
    by: field<string>(record, 'by', 'string'),
    at: field<string>(record, 'at', 'string'),
  };
}

function parseReplica(value: string): ReplicaRecord {
  const record = object(value);
  const state = record.state;
  if (typeof state !== 'object' || state === null) {
    throw new ControlRecordError('state: must be an object');
  }
  return {
    id: field<string>(record, 'id', 'string'),
    version: field<string>(record, 'version', 'string'),
    seenAtMs: field<number>(record, 'seenAtMs', 'number'),
    ttlMs: field<number>(record, 'ttlMs', 'number'),
    appliedVersion: field<number>(record, 'appliedVersion', 'number'),
    appliedAtMs: field<number>(record, 'appliedAtMs', 'number'),
    // Written by ferry itself from PipelineState: taken as it is.
    state: state as PipelineState,
  };
}

function parseClaim(value: string): LockClaim {
  const record = object(value);
  const claimOffset = record.claimOffset;
  return {
    claimId: field<string>(record, 'claimId', 'string'),
    owner: field<string>(record, 'owner', 'string'),
    expiresAtMs: field<number>(record, 'expiresAtMs', 'number'),
    ...(typeof record.ttlMs === 'number' ? { ttlMs: record.ttlMs } : {}),
    ...(typeof claimOffset === 'number' ? { claimOffset } : {}),
  };
}

function parseProgress(value: string): ProgressRecord {
  const record = object(value);
  const error = record.error;
  return {
    owner: field<string>(record, 'owner', 'string'),
    claimId: field<string>(record, 'claimId', 'string'),
    state: field<ReplayPhase>(record, 'state', 'string'),
    replayed: field<number>(record, 'replayed', 'number'),
    scanned: field<number>(record, 'scanned', 'number'),
    skipped: field<number>(record, 'skipped', 'number'),
    alreadyReplayed: field<number>(record, 'alreadyReplayed', 'number'),
    startedAtMs: field<number>(record, 'startedAtMs', 'number'),
    updatedAtMs: field<number>(record, 'updatedAtMs', 'number'),
    ...(typeof error === 'string' ? { error } : {}),
  };
}

/**
 * Reads one record of the control topic; undefined for a key no ferry writes.
 * @throws ControlRecordError (or SyntaxError) for a value this version cannot read.
 */
export function parseControlRecord(key: string, value: string | null): ControlEntry | undefined {
  if (key === PIPELINE_KEY) {
    // A deleted desired state is the initial one.
    return { kind: 'pipeline', record: value === null ? INITIAL_DESIRED : parseDesired(value) };
  }
  if (key.startsWith(REPLICA_PREFIX)) {
    const id = key.slice(REPLICA_PREFIX.length);
    return { kind: 'replica', id, record: value === null ? null : parseReplica(value) };
  }
  if (key.startsWith(LOCK_PREFIX)) {
    const claimId = key.slice(LOCK_PREFIX.length);
    return { kind: 'lock', claimId, record: value === null ? null : parseClaim(value) };
  }
  if (key === PROGRESS_KEY) {
    return { kind: 'progress', record: value === null ? null : parseProgress(value) };
  }
  return undefined;
}

/** The value of a record: the fields with the format version first. */
export function formatRecord(
  record: DesiredRecord | ReplicaRecord | LockClaim | ProgressRecord,
): string {
  return JSON.stringify({ v: RECORD_FORMAT, ...record });
}
