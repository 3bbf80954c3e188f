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
 * Groups items per transport into batches of up to `maxOps`, flushing a partial
 * batch `lingerMs` after its first item arrived. Synchronous and allocation-light:
 * it runs once per command.
 */
export class Batcher<T> {
  readonly #options: BatcherOptions<T>;
  readonly #open = new Map<Transport, Open<T>>();

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
    for (const transport of this.#open.keys()) this.#flushTransport(transport);
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
