/**
 * Gathers the records of concurrent callbacks into few produce requests. A producer that
 * keeps one request in flight (idempotent, `maxInFlightRequests: 1`) writes one record per
 * broker round trip when every callback sends its own; here the records that arrive while a
 * write is in flight wait and go together in the next one, so a round trip carries hundreds.
 * There is no timer: a record that arrives while nothing is in flight is written at the end of
 * the current event-loop turn (setImmediate), together with every other record the same turn
 * of socket reads produced, so a burst of requests read at once starts with one write, not
 * one write of the first record followed by one of the rest.
 *
 * Each caller's promise settles with the write that carried its record: resolved once Kafka
 * acknowledged it, rejected with that write's error (nothing is remembered, so the caller's
 * retry writes it again).
 */
import { FerryError } from '../errors.ts';
import { type OutboundRecord, recordSize } from '../kafka/kafka-client.ts';

export interface ReceiptBatcherOptions {
  /** Resolves once Kafka acknowledged every record; one call at a time. */
  readonly send: (records: readonly OutboundRecord[]) => Promise<void>;
  /** Records per write at most. */
  readonly maxRecords: number;
  /**
   * Estimated bytes per write at most (a larger record goes alone): keep it at or under the
   * producer's largest produce request, so one write is one request.
   */
  readonly maxBytes: number;
}

interface Waiting {
  readonly record: OutboundRecord;
  readonly bytes: number;
  readonly resolve: () => void;
  readonly reject: (error: unknown) => void;
}

export class ReceiptBatcher {
  readonly #options: ReceiptBatcherOptions;
  /** Records waiting for the next write, oldest first; `#head` is the first not yet taken. */
  #queue: Waiting[] = [];
  #head = 0;
  #writing = false;
  /** A write is scheduled for the end of this event-loop turn. */
  #scheduled = false;
  #writes = 0;
  #written = 0;

  /** @throws FerryError `config` when a bound is not a positive integer. */
  constructor(options: ReceiptBatcherOptions) {
    for (const name of ['maxRecords', 'maxBytes'] as const) {
      if (!Number.isInteger(options[name]) || options[name] < 1) {
        throw new FerryError('config', `${name}: must be a positive integer`, { retryable: false });
      }
    }
    this.#options = options;
  }

  /** Records waiting for a write (not counting the write in flight). */
  get waiting(): number {
    return this.#queue.length - this.#head;
  }

  /** Whether a write is in flight. */
  get writing(): boolean {
    return this.#writing;
  }

  /** Writes done (acknowledged or failed) and the records they carried, for the metric and tests. */
  get stats(): { readonly writes: number; readonly records: number } {
    return { writes: this.#writes, records: this.#written };
  }

  /**
   * Queues a record for the next write. Resolves once Kafka acknowledged it.
   * @throws the write's error when the write that carried it failed.
   */
  add(record: OutboundRecord): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.#queue.push({ record, bytes: recordSize(record), resolve, reject });
      if (!this.#writing && !this.#scheduled) {
        this.#scheduled = true;
        setImmediate(() => {
          this.#scheduled = false;
          if (!this.#writing) this.#writeNext();
        });
      }
    });
  }

  /** Takes the next batch off the queue and writes it; when it settles, the next one. */
  #writeNext(): void {
    const batch = this.#take();
    if (batch.length === 0) return;
    this.#writing = true;
    const records = batch.map((waiting) => waiting.record);
    let sent: Promise<void>;
    try {
      sent = this.#options.send(records);
    } catch (error: unknown) {
      sent = Promise.reject(error);
    }
    sent.then(
      () => this.#settle(batch, undefined),
      (error: unknown) => this.#settle(batch, error ?? new Error('the write failed')),
    );
  }

  #settle(batch: readonly Waiting[], error: unknown): void {
    this.#writing = false;
    this.#writes += 1;
    this.#written += batch.length;
    for (const waiting of batch) {
      if (error === undefined) waiting.resolve();
      else waiting.reject(error);
    }
    this.#writeNext();
  }

  /** The oldest waiting records within both bounds (at least one). */
  #take(): Waiting[] {
    const { maxRecords, maxBytes } = this.#options;
    const start = this.#head;
    let end = start;
    let bytes = 0;
    while (end < this.#queue.length && end - start < maxRecords) {
      const next = this.#queue[end] as Waiting;
      if (end > start && bytes + next.bytes > maxBytes) break;
      bytes += next.bytes;
      end += 1;
    }
    const batch = this.#queue.slice(start, end);
    this.#head = end;
    // Compact once the taken part dominates, so the queue neither grows nor copies often.
    if (this.#head === this.#queue.length) {
      this.#queue = [];
      this.#head = 0;
    } else if (this.#head > 1024 && this.#head * 2 > this.#queue.length) {
      this.#queue = this.#queue.slice(this.#head);
      this.#head = 0;
    }
    return batch;
  }
}
