/**
 * Where one partition's next fetched batch must begin, within one assignment of the
 * group. The client can hand a batch over out of sequence: a fetch sent before a rejoin,
 * from the old position, answered after the group's new assignment (kafkajs's fetchers
 * of other brokers keep running while one rejoins) moves the position past the group
 * offset, and the records between would never be read. So the first batch of an
 * assignment is checked against the group offset its takeover read (`atTakeover`), and
 * every later batch against the end of the one before (`check`).
 *
 * A batch fetched from past where it should: the partition is read again from there. If
 * the first batch of that read is fetched from past it again, at the same offset, nothing
 * lies between (transaction markers, aborted records, compaction, retention; kafkajs
 * steps over a fetch that found only those without a word) and the batch is taken; an
 * older observation, or one of an earlier assignment, never confirms a gap. A batch that
 * begins before: what was already handed over in this assignment is left out.
 *
 * Named transitions: `assigned` (the group answered), `rewound` (the partition is read
 * again from an offset), `check` and `atTakeover` (a batch arrived, or was taken over).
 */

export type SequenceCheck =
  | { readonly kind: 'in-order' }
  /** Records are missing before this batch: read the partition again from `from`. */
  | { readonly kind: 'gap'; readonly from: string }
  /** Records before `from` were handed over already in this assignment. */
  | { readonly kind: 'overlap'; readonly from: bigint };

import type { RecordBatch } from '../kafka/kafka-port.ts';

const IN_ORDER: SequenceCheck = { kind: 'in-order' };

export class BatchSequence {
  /** The offset the next batch should begin at (unknown after a rejoin). */
  #next: bigint | undefined;
  /** Where the first batch of this assignment was fetched from, until its takeover checked it. */
  #unverified: bigint | undefined;
  /**
   * A gap found and read again from its start: only the first batch of that read may show
   * that nothing lies in it (it begins past the start at the same offset again).
   */
  #reread: { from: bigint; to: bigint; first: boolean } | undefined;

  /** The group answered: the partition is read from its group offset again. */
  assigned(): void {
    this.#next = undefined;
    this.#unverified = undefined;
    this.#reread = undefined;
  }

  /** The partition is read again from `offset` (a gap's start, or a batch that failed). */
  rewound(offset: string): void {
    const from = BigInt(offset);
    this.#next = from;
    if (this.#reread?.from === from) this.#reread.first = true;
    else this.#reread = undefined;
  }

  /**
   * A batch fetched from `fetchedFrom`, after which the partition's next fetch begins at
   * `nextOffset`, was handed over: whether it continues the partition.
   */
  check(fetchedFrom: string, nextOffset: string): SequenceCheck {
    const expected = this.#next;
    const begin = BigInt(fetchedFrom);
    const end = BigInt(nextOffset);
    const reread = this.#reread;
    const firstOfReread = reread?.first === true;
    if (reread) reread.first = false;
    if (expected === undefined) {
      // The first batch of the assignment: its takeover checks it against the group offset.
      this.#unverified = begin;
      return this.#took(end);
    }
    if (begin === expected) return this.#took(end);
    if (begin < expected) {
      if (end > expected) this.#next = end;
      return { kind: 'overlap', from: expected };
    }
    // The read from the gap's start began past it at the same offset: nothing lies between.
    if (firstOfReread && reread?.from === expected && reread.to === begin) return this.#took(end);
    return this.#gap(expected, begin);
  }

  /**
   * The takeover read `floor` (the group offset; 0 when the group has none) and its batch
   * was fetched from `fetchedFrom`. Only the first batch of an assignment is compared with
   * the floor (every later one was checked against the batch before it): a gap when it
   * was fetched from past the floor.
   */
  atTakeover(floor: bigint, fetchedFrom: string): SequenceCheck {
    const begin = BigInt(fetchedFrom);
    if (this.#unverified !== begin) return IN_ORDER;
    this.#unverified = undefined;
    return begin <= floor ? IN_ORDER : this.#gap(floor, begin);
  }

  #took(next: bigint): SequenceCheck {
    this.#next = next;
    return IN_ORDER;
  }

  #gap(from: bigint, to: bigint): SequenceCheck {
    this.#reread = { from, to, first: false };
    return { kind: 'gap', from: from.toString() };
  }
}

/**
 * A fetched batch as the lanes should see it: in sequence and with its rewinds noted
 * (`rewound`), what was handed over already left out; undefined when nothing of it is
 * to be handled (it began past a gap, and the partition is read again from there, or
 * all of it came before).
 */
export function inSequence(
  batch: RecordBatch,
  sequence: BatchSequence,
  onGap: (from: string) => void,
): RecordBatch | undefined {
  const first = batch.records[0];
  const last = batch.records[batch.records.length - 1];
  if (!first || !last) return undefined;
  const from = batch.fetchedFrom ?? first.offset;
  const next = batch.nextOffset ?? (BigInt(last.offset) + 1n).toString();
  const noted: RecordBatch = {
    ...batch,
    rewind: (offset) => {
      sequence.rewound(offset ?? first.offset);
      batch.rewind(offset);
    },
  };
  const check = sequence.check(from, next);
  if (check.kind === 'in-order') return noted;
  if (check.kind === 'gap') {
    onGap(check.from);
    noted.rewind(check.from);
    return undefined;
  }
  const records = batch.records.filter((record) => BigInt(record.offset) >= check.from);
  const kept = records[0];
  if (!kept) return undefined;
  // Read again, it starts at what it kept: what came before is handed over already.
  return {
    ...noted,
    records,
    fetchedFrom: kept.offset,
    rewind: (offset) => noted.rewind(offset ?? kept.offset),
  };
}
