import type { Transport } from '../contract/index.ts';

/** A group of operations that travel in one request envelope, all on one transport. */
export interface Batch<T> {
  readonly transport: Transport;
  readonly items: readonly T[];
}

export interface BatcherOptions<T> {
  /** Operations per envelope at most (FERRY_BATCH_MAX_OPS). */
  readonly maxOps: number;
  /** How long the first operation of a partial envelope waits for company (FERRY_BATCH_LINGER_MS). */
  readonly lingerMs: number;
  readonly onBatch: (batch: Batch<T>) => void;
}

interface Open<T> {
  items: T[];
  timer: NodeJS.Timeout | undefined;
}

/**
 * Groups items per transport into batches of up to `maxOps`. A batch is cut when it is
 * full, when `lingerMs` passed since its first item, or when the callers said they have
 * nothing more buffered (`inputDrained`): waiting for company that cannot arrive before
 * the partial batch is answered only adds latency. Synchronous and allocation-light: it
 * runs once per command.
 */
export class Batcher<T> {
  readonly #options: BatcherOptions<T>;
  readonly #open = new Map<Transport, Open<T>>();
  #drainFlush: NodeJS.Immediate | undefined;

  constructor(options: BatcherOptions<T>) {
    this.#options = options;
  }

  add(transport: Transport, item: T): void {
    let open = this.#open.get(transport);
    if (!open) {
      open = { items: [], timer: undefined };
      this.#open.set(transport, open);
    }
    open.items.push(item);
    if (open.items.length >= this.#options.maxOps) {
      this.#flush(transport, open);
    } else if (open.timer === undefined) {
      open.timer = setTimeout(() => this.#flushTransport(transport), this.#options.lingerMs);
    }
  }

  /** Sends every partial batch now (shutdown, or the end of an input burst). */
  flushAll(): void {
    if (this.#drainFlush !== undefined) clearImmediate(this.#drainFlush);
    this.#drainFlush = undefined;
    for (const transport of this.#open.keys()) this.#flushTransport(transport);
  }

  /**
   * A caller added everything it had: partial batches go out once the current turn of
   * the event loop ends, so that the other partitions of the same fetch, handled in the
   * same turn, still share their envelopes.
   */
  inputDrained(): void {
    if (this.#drainFlush !== undefined || this.pending === 0) return;
    this.#drainFlush = setImmediate(() => {
      this.#drainFlush = undefined;
      this.flushAll();
    });
  }

  /** Items waiting for their batch to fill. */
  get pending(): number {
    let count = 0;
    for (const open of this.#open.values()) count += open.items.length;
    return count;
  }

  #flushTransport(transport: Transport): void {
    const open = this.#open.get(transport);
    if (open) this.#flush(transport, open);
  }

  #flush(transport: Transport, open: Open<T>): void {
    if (open.timer !== undefined) clearTimeout(open.timer);
    open.timer = undefined;
    if (open.items.length === 0) return;
    const items = open.items;
    open.items = [];
    this.#options.onBatch({ transport, items });
  }
}
