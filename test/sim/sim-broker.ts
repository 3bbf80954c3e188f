/**
 * The simulated broker's data: the commands log of each partition, the records and
 * group offsets that transactions made visible, and each transactional id's epoch and
 * last transaction. Kafka's timing that ferry's races live in is kept:
 *
 * - EndTxn is answered once the commit is logged; its markers (what makes the records
 *   and the group offset visible) come a little later, and after a restart only once
 *   the broker is back. Until then the group offset reads as it was without
 *   require_stable; with it (`stableCommitted`) the partition is unstable.
 * - A transaction is open from its offsets' TxnOffsetCommit until EndTxn: its offsets are
 *   pending (unstable) all that time. One whose producer never ends it (frozen, killed,
 *   its EndTxn lost) stays open until its transactional id is initialised again, which
 *   aborts it, or until the transaction timeout, when the broker aborts it and bumps the
 *   id's epoch, so that the producer's late EndTxn is refused as fenced. The timeout is
 *   checked when the transaction is next looked at (no timer: the seeded schedules are
 *   the same whether or not anyone asks).
 * - Initialising a producer of a transactional id bumps its epoch (fencing every
 *   earlier holder), aborts its open transaction and waits until its last logged
 *   transaction is complete.
 * - While the broker is down every request fails; a transaction logged before the
 *   restart completes after it.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { OutboundRecord, PartitionOffset } from '../../src/kafka/kafka-port.ts';
import type { SimRandom } from './sim-random.ts';

export interface LogRecord {
  readonly key: string;
  readonly value: string;
  readonly timestampMs: number;
}

/** A record a committed transaction made visible. */
export interface VisibleRecord {
  readonly topic: string;
  readonly key: string | null;
  readonly value: string | null;
  readonly transactionalId: string;
  /** The partition it was written to, when its writer chose one. */
  readonly partition?: number;
}

interface OffsetEntry {
  readonly offset: string;
  readonly metadata: string | null;
}

interface Logged {
  readonly records: readonly OutboundRecord[];
  readonly offsets: readonly PartitionOffset[];
  done: Promise<void>;
  complete: () => void;
}

/** A transaction whose offsets were added and whose EndTxn was not logged yet. */
interface OpenTransaction {
  readonly epoch: number;
  readonly partitions: readonly number[];
  readonly openedAtMs: number;
  /** The timeout its producer asked for, ms (default: the broker's). */
  readonly timeoutMs: number | undefined;
}

interface TransactionalId {
  epoch: number;
  /** The last transaction logged and not yet complete (markers to write). */
  logged: Logged | undefined;
  open: OpenTransaction | undefined;
}

/** What OffsetFetch with require_stable answers for a partition. */
export type StableAnswer =
  | { readonly stable: true; readonly entry: OffsetEntry | undefined }
  | { readonly stable: false };

export interface BrokerTiming {
  /** Longest wait between a logged commit and its markers, ms. */
  readonly markerDelayMaxMs: number;
  /**
   * Longest time a restarted broker's transaction coordinator takes to load its log, ms:
   * markers of transactions logged before the restart wait for it, and so does every
   * InitProducerId of their ids (the client retries it meanwhile).
   */
  readonly coordinatorLoadMaxMs: number;
  /** After this long open a transaction is aborted by the broker, ms (ferry's producers: 60 s). */
  readonly transactionTimeoutMs?: number;
}

/** The transaction timeout ferry's transactional producers ask for. */
export const DEFAULT_TRANSACTION_TIMEOUT_MS = 60_000;

/** kafkajs's text of a broker that cannot be reached. */
export const CONNECTION_ERROR = 'Connection error: connect ECONNREFUSED 127.0.0.1:9092';
/** kafkajs's text of INVALID_PRODUCER_EPOCH: another producer initialised the id. */
export const FENCED_ERROR = 'Producer attempted an operation with an old epoch';

export class SimBroker {
  readonly #random: SimRandom;
  readonly #timing: BrokerTiming;
  /** Per partition, the log; undefined stands for a transaction marker (an offset without a record). */
  readonly #logs: (LogRecord | undefined)[][];
  readonly visible: VisibleRecord[] = [];
  readonly #offsets = new Map<number, OffsetEntry>();
  readonly #ids = new Map<string, TransactionalId>();
  #down = false;
  /** Until when (virtual ms) the transaction coordinator is loading after a restart. */
  #loadedAtMs = 0;
  #up: { promise: Promise<void>; resolve: () => void } | undefined;
  readonly #restartListeners: (() => void)[] = [];
  #downWaiters: (() => void)[] = [];

  constructor(random: SimRandom, partitions: number, timing: BrokerTiming) {
    this.#random = random;
    this.#timing = timing;
    this.#logs = Array.from({ length: partitions }, () => []);
  }

  get partitions(): number {
    return this.#logs.length;
  }

  get down(): boolean {
    return this.#down;
  }

  /** Called each time the broker is back. */
  onRestart(listener: () => void): void {
    this.#restartListeners.push(listener);
  }

  goDown(): void {
    if (this.#down) return;
    this.#down = true;
    let resolve: () => void = () => undefined;
    const promise = new Promise<void>((r) => {
      resolve = r;
    });
    this.#up = { promise, resolve };
    const waiters = this.#downWaiters;
    this.#downWaiters = [];
    for (const wake of waiters) wake();
  }

  comeUp(): void {
    if (!this.#down) return;
    this.#down = false;
    this.#loadedAtMs = Date.now() + this.#random.int(0, this.#timing.coordinatorLoadMaxMs);
    this.#up?.resolve();
    this.#up = undefined;
    for (const listener of this.#restartListeners) listener();
  }

  /** Throws kafkajs's connection error while the broker is down. */
  check(): void {
    if (this.#down) throw new Error(CONNECTION_ERROR);
  }

  append(partition: number, record: LogRecord): void {
    this.#logs[partition]?.push(record);
  }

  /** A transaction marker: it takes an offset, and no read returns it. */
  appendMarker(partition: number): void {
    this.#logs[partition]?.push(undefined);
  }

  /** The offset after the partition's last record (markers after it do not count). */
  recordsEnd(partition: number): bigint {
    const log = this.#logs[partition] ?? [];
    let end = log.length;
    while (end > 0 && log[end - 1] === undefined) end -= 1;
    return BigInt(end);
  }

  endOffset(partition: number): bigint {
    return BigInt(this.#logs[partition]?.length ?? 0);
  }

  /**
   * Up to `max` records of a partition from `from`, with their offsets, and where the next
   * read begins (past the markers that follow the last record).
   */
  read(
    partition: number,
    from: bigint,
    max: number,
  ): { records: { offset: bigint; record: LogRecord }[]; next: bigint } {
    const log = this.#logs[partition] ?? [];
    const records: { offset: bigint; record: LogRecord }[] = [];
    let i = Number(from);
    for (; i < log.length; i++) {
      const record = log[i];
      if (!record) continue;
      if (records.length === max) break;
      records.push({ offset: BigInt(i), record });
    }
    return { records, next: BigInt(i) };
  }

  /** Whether every transaction EndTxn logged is complete (its markers written). */
  quiescent(): boolean {
    for (const id of this.#ids.values()) if (id.logged) return false;
    return true;
  }

  /** The group offset of a partition as a read without require_stable sees it now. */
  committed(partition: number): OffsetEntry | undefined {
    return this.#offsets.get(partition);
  }

  #id(transactionalId: string): TransactionalId {
    let id = this.#ids.get(transactionalId);
    if (!id) {
      id = { epoch: 0, logged: undefined, open: undefined };
      this.#ids.set(transactionalId, id);
    }
    return id;
  }

  /**
   * InitProducerId: waits until the id's last transaction is complete, then bumps the
   * epoch. @returns the new epoch. @throws while the broker is down.
   */
  async initProducerId(transactionalId: string): Promise<number> {
    this.check();
    const id = this.#id(transactionalId);
    // The open transaction of an earlier holder is aborted: its offsets are stable again.
    id.open = undefined;
    while (id.logged) {
      const done = id.logged.done;
      await Promise.race([done, this.#whenDown()]);
      this.check();
    }
    id.epoch += 1;
    return id.epoch;
  }

  /**
   * The transaction's offsets were added (TxnOffsetCommit answered): from now on they are
   * pending until its EndTxn is logged and its markers written, or it is aborted. A
   * producer fenced meanwhile opens nothing (its next step is refused).
   */
  openTransaction(
    transactionalId: string,
    epoch: number,
    offsets: readonly PartitionOffset[],
    timeoutMs?: number,
  ): void {
    const id = this.#id(transactionalId);
    if (id.epoch !== epoch || this.#down) return;
    const partitions = offsets.map((o) => o.partition);
    if (id.open?.epoch === epoch) {
      id.open = { ...id.open, partitions: [...new Set([...id.open.partitions, ...partitions])] };
      return;
    }
    id.open = { epoch, partitions, openedAtMs: Date.now(), timeoutMs };
  }

  /** Aborts the id's open transaction once it outlived the transaction timeout (and fences its producer). */
  #expire(id: TransactionalId): void {
    const open = id.open;
    if (!open) return;
    const timeoutMs =
      open.timeoutMs ?? this.#timing.transactionTimeoutMs ?? DEFAULT_TRANSACTION_TIMEOUT_MS;
    if (Date.now() - open.openedAtMs < timeoutMs) return;
    id.open = undefined;
    if (id.epoch === open.epoch) id.epoch += 1;
  }

  /**
   * OffsetFetch with require_stable: unstable while an open transaction, or one logged
   * whose markers are not written yet, holds an offset of the partition.
   * @throws while the broker is down.
   */
  stableCommitted(partition: number): StableAnswer {
    this.check();
    for (const id of this.#ids.values()) {
      this.#expire(id);
      if (id.open?.partitions.includes(partition)) return { stable: false };
      if (id.logged?.offsets.some((o) => o.partition === partition)) return { stable: false };
    }
    return { stable: true, entry: this.#offsets.get(partition) };
  }

  /** @throws the fencing error when `epoch` is no longer the id's. */
  checkEpoch(transactionalId: string, epoch: number): void {
    this.check();
    if (this.#id(transactionalId).epoch !== epoch) throw new Error(FENCED_ERROR);
  }

  /**
   * Waits while the id's previous transaction is still completing (the adapter retries
   * CONCURRENT_TRANSACTIONS). @throws when the broker goes down meanwhile.
   */
  async previousComplete(transactionalId: string): Promise<void> {
    const id = this.#id(transactionalId);
    while (id.logged) {
      await Promise.race([id.logged.done, this.#whenDown()]);
      this.check();
    }
  }

  /**
   * EndTxn(commit) logged: the transaction will complete (its records and offsets become
   * visible) after a marker delay, or once the broker is back.
   */
  logCommit(
    transactionalId: string,
    epoch: number,
    records: readonly OutboundRecord[],
    offsets: readonly PartitionOffset[],
  ): void {
    const id = this.#id(transactionalId);
    this.#expire(id);
    this.checkEpoch(transactionalId, epoch);
    id.open = undefined;
    let complete: () => void = () => undefined;
    const done = new Promise<void>((resolve) => {
      complete = resolve;
    });
    const logged: Logged = { records, offsets, done, complete };
    id.logged = logged;
    void this.#writeMarkers(transactionalId, id, logged);
  }

  async #writeMarkers(transactionalId: string, id: TransactionalId, logged: Logged): Promise<void> {
    const delay = this.#random.int(0, this.#timing.markerDelayMaxMs);
    if (delay > 0) await sleep(delay);
    while (this.#down) await this.#up?.promise;
    const loading = this.#loadedAtMs - Date.now();
    if (loading > 0) await sleep(loading);
    while (this.#down) await this.#up?.promise;
    for (const record of logged.records) {
      this.visible.push({
        topic: record.topic,
        key: record.key === null ? null : String(record.key),
        value: record.value === null ? null : String(record.value),
        transactionalId,
        ...(record.partition === undefined ? {} : { partition: record.partition }),
      });
    }
    for (const o of logged.offsets) {
      this.#offsets.set(o.partition, { offset: o.offset, metadata: o.metadata ?? null });
    }
    if (id.logged === logged) id.logged = undefined;
    logged.complete();
  }

  /** Settles when the broker goes down next (never while it stays up). */
  #whenDown(): Promise<void> {
    return new Promise((resolve) => this.#downWaiters.push(resolve));
  }
}
