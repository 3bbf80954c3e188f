/**
 * This replica's part in the fleet (README, Fleet control): it reads the control topic
 * whole before the pipeline starts and applies the fleet's desired state, then follows
 * it (a change reaches every replica within a fetch round trip), and publishes its own
 * state every 2 s and on change, with a time to live, and a tombstone at a clean stop.
 * The Kafka side is the ControlLog port, implemented by src/kafka/control-topic.ts.
 */
import { FerryError } from '../errors.ts';
import type { Logger } from '../observability/logger.ts';
import type { DesiredConsumption } from '../pipeline/consumption-mode.ts';
import type { PipelineControl, PipelineState } from '../pipeline/pipeline-control.ts';
import {
  ControlRecordError,
  type DesiredRecord,
  formatRecord,
  LOCK_PREFIX,
  PIPELINE_KEY,
  type ProgressRecord,
  parseControlRecord,
  REPLICA_PREFIX,
  type ReplicaRecord,
} from './control-records.ts';
import { FleetView } from './fleet-view.ts';

/** The control topic as the fleet needs it. */
export interface ControlLog {
  /** Reads every record there is, in offset order, then keeps following. */
  start(
    onRecord: (record: { key: string; value: string | null; offset: number }) => void,
  ): Promise<void>;
  /** Writes a record (null: tombstone) acknowledged by all in-sync replicas; its offset. */
  write(key: string, value: string | null): Promise<number>;
  /** Resolves once the record at `offset` was read back. */
  applied(offset: number): Promise<void>;
  stop(): Promise<void>;
}

/** What the admin API shows of the fleet. */
export interface FleetSnapshot {
  readonly desired: DesiredRecord;
  /** The replica answering. */
  readonly self: string;
  /** Live replicas, by id; this one with its state of now. */
  readonly replicas: readonly ReplicaRecord[];
  readonly progress: ProgressRecord | undefined;
}

export interface FleetControlOptions {
  readonly log: ControlLog;
  readonly pipeline: PipelineControl;
  readonly logger: Logger;
  /** Host (pod) name plus a nonce of this start. */
  readonly replicaId: string;
  /** ferry's package version. */
  readonly version: string;
  /** Publishes its state at least this often. Default 2000 ms. */
  readonly publishEveryMs?: number;
  /** Others drop this replica this long after its last record. Default 10 000 ms. */
  readonly ttlMs?: number;
  /** A replica or claim dead for this long past its expiry gets a tombstone. Default 60 000 ms. */
  readonly collectAfterMs?: number;
  /**
   * The consumer group's lag by partition (end offset − committed offset), asked before
   * each publish. A paused replica fetches nothing, so the lag its last batch saw would
   * stand still while commands pile up; this one grows.
   */
  readonly groupLag?: () => Promise<ReadonlyMap<number, number>>;
  /** The topic `groupLag` measures: other topics' partitions (the urgent lane's) keep their own lag. */
  readonly groupLagTopic?: string;
}

/** Longest wait for a record this replica wrote to come back through its follower. */
const READ_BACK_MS = 10_000;

/** How often the state is compared with the last one published, to publish changes early. */
const CHANGE_CHECK_MS = 200;

/** The parts of a state whose change is published at once (not lags and counters). */
function signature(state: PipelineState): string {
  return JSON.stringify([
    state.running,
    state.phase,
    state.desired,
    state.pauseReasons,
    state.lastError,
    state.partitions.map((p) => p.partition),
  ]);
}

export class FleetControl {
  readonly #options: FleetControlOptions;
  readonly #log: Logger;
  readonly view = new FleetView();
  #following = false;
  #appliedVersion = 0;
  #appliedAtMs = 0;
  #timer: NodeJS.Timeout | undefined;
  #lastPublishedMs = 0;
  #lastSignature = '';
  #publishing: Promise<void> = Promise.resolve();
  #groupLag: ReadonlyMap<number, number> = new Map();
  /** Tombstones written and not read back yet, so they are written once. */
  readonly #collecting = new Set<string>();

  constructor(options: FleetControlOptions) {
    this.#options = options;
    this.#log = options.logger.child({ component: 'fleet', replica: options.replicaId });
  }

  get replicaId(): string {
    return this.#options.replicaId;
  }

  get ttlMs(): number {
    return this.#options.ttlMs ?? 10_000;
  }

  /**
   * Reads the control topic to its end and applies the desired state it holds, then
   * follows it and starts publishing. Call before the pipeline starts consuming.
   * @throws FerryError `kafka`.
   */
  async start(): Promise<void> {
    await this.#options.log.start((record) => this.#onRecord(record));
    this.#following = true;
    this.#applyDesired();
    this.#log.info({ desired: this.view.desired }, 'fleet control read; desired state applied');
    // The first state record is written before start returns, so a replica that may not
    // write the control topic (a missing ACL) stops here instead of running unseen.
    const record = this.#ownRecord(Date.now());
    await this.#options.log.write(`${REPLICA_PREFIX}${record.id}`, formatRecord(record));
    this.#publish();
    this.#timer = setInterval(() => this.#tick(), CHANGE_CHECK_MS);
    this.#timer.unref();
  }

  /**
   * Writes the fleet's desired state and resolves once this replica applied it.
   * @throws FerryError `kafka`.
   */
  async setDesired(desired: DesiredConsumption, reason: string): Promise<DesiredRecord> {
    const record: DesiredRecord = {
      desired,
      version: this.view.desired.version + 1,
      reason,
      by: this.#options.replicaId,
      at: new Date().toISOString(),
    };
    await this.write(PIPELINE_KEY, formatRecord(record));
    return this.view.desired;
  }

  /**
   * Writes a record of the control topic and resolves once it was read back.
   * @throws FerryError `kafka`, also when it is not read back within READ_BACK_MS (the
   *   follower is stuck): a caller must not act on a record it has not seen applied.
   */
  async write(key: string, value: string | null): Promise<number> {
    const offset = await this.#options.log.write(key, value);
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () =>
          reject(
            new FerryError(
              'kafka',
              `the control record ${key} was not read back within ${READ_BACK_MS} ms`,
            ),
          ),
        READ_BACK_MS,
      );
    });
    try {
      await Promise.race([this.#options.log.applied(offset), late]);
    } finally {
      clearTimeout(timer);
    }
    return offset;
  }

  snapshot(nowMs = Date.now()): FleetSnapshot {
    const self = this.#ownRecord(nowMs);
    const others = this.view.liveReplicas(nowMs).filter((r) => r.id !== self.id);
    return {
      desired: this.view.desired,
      self: self.id,
      replicas: [...others, self].sort((a, b) => a.id.localeCompare(b.id)),
      progress: this.view.progress,
    };
  }

  /** Stops publishing, writes this replica's tombstone, stops following. Idempotent. */
  async stop(): Promise<void> {
    clearInterval(this.#timer);
    this.#timer = undefined;
    const wasFollowing = this.#following;
    this.#following = false;
    await this.#publishing;
    if (wasFollowing) {
      await this.#options.log
        .write(`${REPLICA_PREFIX}${this.#options.replicaId}`, null)
        .catch((error: unknown) =>
          this.#log.warn({ err: String(error) }, 'writing the replica tombstone failed'),
        );
    }
    await this.#options.log.stop();
  }

  #onRecord(record: { key: string; value: string | null; offset: number }): void {
    let entry: ReturnType<typeof parseControlRecord>;
    try {
      entry = parseControlRecord(record.key, record.value);
    } catch (error: unknown) {
      const reason = error instanceof ControlRecordError ? error.message : String(error);
      this.#log.warn(
        { key: record.key, offset: record.offset, reason },
        'unreadable control record skipped',
      );
      return;
    }
    if (!entry) return;
    if (record.value === null) this.#collecting.delete(record.key);
    // Received now, on this replica's clock: expiry never compares two machines' clocks.
    this.view.apply(entry, record.offset, Date.now());
    if (entry.kind === 'pipeline' && this.#following) this.#applyDesired();
  }

  #applyDesired(): void {
    const desired = this.view.desired;
    this.#options.pipeline.setDesired(desired.desired);
    if (desired.version !== this.#appliedVersion || this.#appliedAtMs === 0) {
      this.#appliedVersion = desired.version;
      this.#appliedAtMs = Date.now();
      this.#log.info(
        { desired: desired.desired, version: desired.version, by: desired.by },
        'fleet desired state applied',
      );
    }
  }

  #ownRecord(nowMs: number): ReplicaRecord {
    const state = this.#options.pipeline.state();
    const lag = this.#groupLag;
    return {
      id: this.#options.replicaId,
      version: this.#options.version,
      seenAtMs: nowMs,
      ttlMs: this.ttlMs,
      appliedVersion: this.#appliedVersion,
      appliedAtMs: this.#appliedAtMs,
      state: {
        ...state,
        partitions: state.partitions.map((p) =>
          this.#options.groupLagTopic !== undefined && p.topic !== this.#options.groupLagTopic
            ? p
            : { ...p, lag: lag.get(p.partition) ?? p.lag },
        ),
      },
    };
  }

  #tick(): void {
    const now = Date.now();
    const changed = signature(this.#options.pipeline.state()) !== this.#lastSignature;
    if (changed || now - this.#lastPublishedMs >= (this.#options.publishEveryMs ?? 2_000)) {
      this.#publish();
    }
  }

  /** Writes this replica's state, and tombstones of replicas and claims long dead. */
  #publish(): void {
    const now = Date.now();
    this.#lastPublishedMs = now;
    this.#lastSignature = signature(this.#options.pipeline.state());
    const collectAfter = this.#options.collectAfterMs ?? 60_000;
    const tombstones = [
      ...this.view.deadReplicas(now, collectAfter).map((id) => `${REPLICA_PREFIX}${id}`),
      ...this.view.lapsedClaims(now, collectAfter).map((id) => `${LOCK_PREFIX}${id}`),
    ].filter((key) => !this.#collecting.has(key));
    for (const key of tombstones) this.#collecting.add(key);
    const log = this.#options.log;
    this.#publishing = this.#publishing
      .then(async () => {
        if (!this.#following) return;
        if (this.#options.groupLag) {
          this.#groupLag = await this.#options.groupLag().catch(() => this.#groupLag);
        }
        const record = this.#ownRecord(Date.now());
        await log.write(`${REPLICA_PREFIX}${record.id}`, formatRecord(record));
        for (const key of tombstones) await log.write(key, null);
      })
      .catch((error: unknown) => {
        this.#log.warn({ err: String(error) }, 'publishing the replica state failed');
      });
  }
}
