/**
 * How far dead-letter replay got in one partition of the dead-letter topic, so
 * that a dead letter is replayed at most once even when filters skip some:
 * the committed offset says "everything before was replayed (or was no record)",
 * and the offset-commit metadata lists the offsets at or after it that were
 * replayed too (ranges, `v1:3-7,12`).
 */

/** Kafka's default `offset.metadata.max.bytes` is 4096; stay under it. */
export const MAX_PROGRESS_METADATA_CHARS = 4000;

const prefix = 'v1:';

/** A sorted set of offsets kept as inclusive ranges. */
export class OffsetRanges {
  /** Sorted, disjoint, non-adjacent inclusive [first, last] pairs. */
  #ranges: [number, number][] = [];

  static parse(text: string | null | undefined): OffsetRanges {
    const set = new OffsetRanges();
    if (!text) return set;
    if (!text.startsWith(prefix)) {
      throw new TypeError(`unreadable replay progress metadata: ${text.slice(0, 40)}`);
    }
    const body = text.slice(prefix.length);
    if (body === '') return set;
    for (const part of body.split(',')) {
      const match = /^(\d+)(?:-(\d+))?$/.exec(part);
      if (!match?.[1]) throw new TypeError(`unreadable replay progress range: ${part}`);
      const first = Number(match[1]);
      const last = match[2] === undefined ? first : Number(match[2]);
      if (last < first) throw new TypeError(`unreadable replay progress range: ${part}`);
      set.#addRange(first, last);
    }
    return set;
  }

  has(offset: number): boolean {
    return this.#ranges.some(([first, last]) => offset >= first && offset <= last);
  }

  add(offset: number): void {
    if (!this.has(offset)) this.#addRange(offset, offset);
  }

  #addRange(firstOffset: number, lastOffset: number): void {
    const ranges = [...this.#ranges, [firstOffset, lastOffset] as [number, number]];
    ranges.sort((a, b) => a[0] - b[0]);
    const merged: [number, number][] = [];
    for (const range of ranges) {
      const previous = merged.at(-1);
      if (previous && range[0] <= previous[1] + 1) previous[1] = Math.max(previous[1], range[1]);
      else merged.push([range[0], range[1]]);
    }
    this.#ranges = merged;
  }

  /** Drops the offsets below `offset`. */
  dropBelow(offset: number): void {
    this.#ranges = this.#ranges
      .filter(([, last]) => last >= offset)
      .map(([first, last]): [number, number] => [Math.max(first, offset), last]);
  }

  /** The first offset at or after `offset` that is not in the set. */
  firstAbsentFrom(offset: number): number {
    let candidate = offset;
    for (const [first, last] of this.#ranges) {
      if (first <= candidate && candidate <= last) candidate = last + 1;
    }
    return candidate;
  }

  format(): string {
    return (
      prefix +
      this.#ranges
        .map(([first, last]) => (first === last ? `${first}` : `${first}-${last}`))
        .join(',')
    );
  }

  get isEmpty(): boolean {
    return this.#ranges.length === 0;
  }
}

/** The committed state of one partition: next offset to look at, and the replayed offsets beyond it. */
export interface PartitionProgress {
  readonly offset: number;
  readonly metadata: string | null;
}

/**
 * What one replay run learned about a partition, folded into its new progress.
 * @param start the committed offset the run started from.
 * @param scannedTo the first offset the run did not look at.
 * @param firstSkipped the first record the run looked at and did not replay (filter), if any.
 */
export function nextProgress(
  start: number,
  scannedTo: number,
  firstSkipped: number | undefined,
  replayed: OffsetRanges,
): PartitionProgress {
  // Every offset in [start, scannedTo) is replayed, skipped, or holds no visible record
  // (transaction markers, aborted writes): only skipped ones must stay ahead of the commit.
  const boundary = firstSkipped === undefined ? scannedTo : Math.min(firstSkipped, scannedTo);
  const offset = replayed.firstAbsentFrom(Math.max(start, boundary));
  replayed.dropBelow(offset);
  return { offset, metadata: replayed.isEmpty ? null : replayed.format() };
}
