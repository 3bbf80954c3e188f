/**
 * The backpressure bound of the pipeline: commands and bytes of command records read
 * and not yet committed. Reaching either cap pauses fetching; it resumes once both are
 * at or below half their cap (hysteresis, so fetching does not flap at the edge).
 * Bytes count what a fetched record holds: value, key and header names and values.
 */
import type { InboundRecord } from '../kafka/kafka-port.ts';

export interface InFlightLimits {
  /** Commands read and not yet committed, at most (FERRY_MAX_COMMANDS_IN_FLIGHT). */
  readonly maxCommands: number;
  /** Bytes of those commands' records, at most (FERRY_MAX_BYTES_IN_FLIGHT). */
  readonly maxBytes: number;
}

/** What a change of the amounts in flight asks of the consumer. */
export type BudgetTransition = 'pause' | 'resume' | undefined;

export class InFlightBudget {
  readonly #limits: InFlightLimits;
  #commands = 0;
  #bytes = 0;
  #exhausted = false;

  constructor(limits: InFlightLimits) {
    this.#limits = limits;
  }

  get commands(): number {
    return this.#commands;
  }

  get bytes(): number {
    return this.#bytes;
  }

  /** True from reaching a cap until both amounts are back to half their cap. */
  get exhausted(): boolean {
    return this.#exhausted;
  }

  /**
   * Adds (positive) or removes (negative) commands and bytes; returns `pause` when this
   * reached a cap, `resume` when it brought both amounts to half their cap, else undefined.
   */
  change(commands: number, bytes: number): BudgetTransition {
    this.#commands += commands;
    this.#bytes += bytes;
    const { maxCommands, maxBytes } = this.#limits;
    if (!this.#exhausted && (this.#commands >= maxCommands || this.#bytes >= maxBytes)) {
      this.#exhausted = true;
      return 'pause';
    }
    if (this.#exhausted && this.#commands <= maxCommands / 2 && this.#bytes <= maxBytes / 2) {
      this.#exhausted = false;
      return 'resume';
    }
    return undefined;
  }
}

/** Bytes a fetched record holds: value, key and headers (UTF-8 lengths). */
export function recordBytes(record: InboundRecord): number {
  let bytes = (record.value?.length ?? 0) + (record.key?.length ?? 0);
  for (const [name, value] of Object.entries(record.headers)) {
    bytes += Buffer.byteLength(name) + Buffer.byteLength(value);
  }
  return bytes;
}

/** Bytes of a batch of fetched records. */
export function batchBytes(records: readonly InboundRecord[]): number {
  let bytes = 0;
  for (const record of records) bytes += recordBytes(record);
  return bytes;
}

export interface FetchSizes {
  /** Bytes of one fetch over all partitions (kafkajs maxBytes). */
  readonly maxBytes: number;
  /** Bytes per partition per fetch (kafkajs maxBytesPerPartition). */
  readonly maxBytesPerPartition: number;
}

/** Smallest fetch sizes derived from the cap: a record larger than them is still fetched alone. */
const MIN_FETCH_BYTES = 64 * 1024;

/**
 * Fetch sizes from the in-flight cap unless set explicitly: one fetch is an eighth of the
 * cap (fetches of several brokers and the decoded copies of their records fit under it
 * with room for the commands already in flight) and a partition's share a quarter of a
 * fetch, so at least four partitions feed each fetch. The default 8 MiB cap gives 1 MiB and
 * 256 KiB.
 */
export function fetchSizes(
  maxBytesInFlight: number,
  explicit: {
    readonly maxBytes?: number | undefined;
    readonly maxBytesPerPartition?: number | undefined;
  },
): FetchSizes {
  const maxBytes = explicit.maxBytes ?? Math.max(MIN_FETCH_BYTES, Math.floor(maxBytesInFlight / 8));
  const maxBytesPerPartition =
    explicit.maxBytesPerPartition ?? Math.max(MIN_FETCH_BYTES, Math.floor(maxBytes / 4));
  return { maxBytes, maxBytesPerPartition };
}
