/**
 * Splits the decompressed records section of a record batch into records while it
 * streams out of the decompressor, so that no record is held whole unless it is small
 * enough to be handled.
 *
 * A record (message format v2) is `length varint, attributes int8, timestampDelta
 * varlong, offsetDelta varint, key (varint length, bytes), value (varint length, bytes),
 * headers (varint count, then varint-length key and value each)`, all varints zigzag.
 * A record whose length is within `wholeRecordMaxBytes` comes out as it is. A larger
 * one is read through without keeping its value: it comes out as a stand-in record
 * with the same attributes, timestamp, offset, key and headers (each kept when within
 * `keptPartMaxBytes`), a null value and one more header, `marker`, whose value is the
 * record's length. So a 100 MB value compressed to a few hundred bytes costs a few
 * hundred kilobytes here, whatever the codec.
 */

/** A record as it comes out of the splitter: its body without the length prefix. */
export interface SplitRecord {
  /** The record's body: the original bytes, or the stand-in's. */
  readonly body: Buffer;
  /** The record's offset delta within its batch. */
  readonly offsetDelta: number;
  /** The original record's length when `body` is a stand-in; undefined otherwise. */
  readonly oversizedBytes?: number;
  /** The original value's length when `body` is a stand-in (-1 for a null value). */
  readonly oversizedValueBytes?: number;
}

export interface SplitterLimits {
  /** Records up to this length come out whole. */
  readonly wholeRecordMaxBytes: number;
  /** The key and the headers of a larger record are kept when within this many bytes each. */
  readonly keptPartMaxBytes: number;
  /** Header name marking a stand-in; its value is `${markerPrefix}${length}`. */
  readonly marker: string;
  readonly markerPrefix: string;
}

export class RecordSplitError extends Error {
  override name = 'RecordSplitError';
}

/** The bytes fed so far, read from the front; what is read is released. */
class Cursor {
  chunk: Uint8Array = new Uint8Array(0);
  pos = 0;
  get available(): number {
    return this.chunk.length - this.pos;
  }
}

/** A read that may have to wait for the next chunk: `yield` asks for one. */
type Read<T> = Generator<undefined, T, undefined>;

function* readByte(cursor: Cursor): Read<number> {
  while (cursor.available === 0) yield;
  return cursor.chunk[cursor.pos++] ?? 0;
}

/** An unsigned LEB128 varint of up to 10 bytes as a number, with its bytes. */
function* readRawVarint(cursor: Cursor, maxBytes: number): Read<{ value: number; raw: Buffer }> {
  const raw: number[] = [];
  let value = 0;
  let scale = 1;
  for (;;) {
    const byte = yield* readByte(cursor);
    raw.push(byte);
    value += (byte & 0x7f) * scale;
    scale *= 128;
    if ((byte & 0x80) === 0) break;
    if (raw.length >= maxBytes) throw new RecordSplitError('a varint runs past its longest form');
  }
  return { value, raw: Buffer.from(raw) };
}

function unzigzag(value: number): number {
  // value holds up to 2^70 in a double; halving keeps integers exact up to 2^53.
  return value % 2 === 0 ? value / 2 : -(value + 1) / 2;
}

function* readZigzag(cursor: Cursor, maxBytes = 5): Read<{ value: number; raw: Buffer }> {
  const { value, raw } = yield* readRawVarint(cursor, maxBytes);
  return { value: unzigzag(value), raw };
}

/** Copies the next `length` bytes, across as many chunks as they span. */
function* readBytes(cursor: Cursor, length: number): Read<Buffer> {
  const out = Buffer.allocUnsafe(length);
  let filled = 0;
  while (filled < length) {
    while (cursor.available === 0) yield;
    const take = Math.min(length - filled, cursor.available);
    out.set(cursor.chunk.subarray(cursor.pos, cursor.pos + take), filled);
    cursor.pos += take;
    filled += take;
  }
  return out;
}

/** Passes over the next `length` bytes without keeping them. */
function* skipBytes(cursor: Cursor, length: number): Read<void> {
  let left = length;
  while (left > 0) {
    while (cursor.available === 0) yield;
    const take = Math.min(left, cursor.available);
    cursor.pos += take;
    left -= take;
  }
}

export function zigzagVarint(value: number): Buffer {
  let n = value >= 0 ? value * 2 : -value * 2 - 1;
  const out: number[] = [];
  while (n >= 0x80) {
    out.push((n % 0x80) | 0x80);
    n = Math.floor(n / 0x80);
  }
  out.push(n);
  return Buffer.from(out);
}

/**
 * A zigzag varint of at most `maxBytes` at `at` when all of it is there: [value, next
 * position], or undefined when the bytes end first.
 */
function peekZigzag(bytes: Uint8Array, at: number, maxBytes: number): [number, number] | undefined {
  let value = 0;
  let scale = 1;
  for (let i = 0; i < maxBytes; i++) {
    if (at + i >= bytes.length) return undefined;
    const byte = bytes[at + i] ?? 0;
    value += (byte & 0x7f) * scale;
    if ((byte & 0x80) === 0) return [unzigzag(value), at + i + 1];
    scale *= 128;
  }
  throw new RecordSplitError('a varint runs past its longest form');
}

/** The offset delta of a whole record's body (after attributes and the timestamp delta). */
function offsetDeltaOf(body: Uint8Array): number {
  const timestamp = peekZigzag(body, 1, 10);
  const offset = timestamp && peekZigzag(body, timestamp[1], 5);
  if (offset === undefined) throw new RecordSplitError('a record ends before its offset delta');
  return offset[0];
}

/** Reads one record that did not fit in what was there when it began. */
function* readRecord(cursor: Cursor, limits: SplitterLimits): Read<SplitRecord> {
  const length = (yield* readZigzag(cursor)).value;
  if (length < 0) throw new RecordSplitError(`a record of negative length ${length}`);
  if (length <= limits.wholeRecordMaxBytes) {
    const body = yield* readBytes(cursor, length);
    return { body, offsetDelta: offsetDeltaOf(body) };
  }
  return yield* readOversized(cursor, length, limits);
}

function* readOversized(cursor: Cursor, length: number, limits: SplitterLimits): Read<SplitRecord> {
  let read = 0;
  const attributes = yield* readBytes(cursor, 1);
  const timestamp = (yield* readRawVarint(cursor, 10)).raw;
  const offset = yield* readZigzag(cursor);
  read += 1 + timestamp.length + offset.raw.length;
  const keyLength = yield* readZigzag(cursor);
  read += keyLength.raw.length;
  let key = zigzagVarint(-1);
  if (keyLength.value > 0) {
    if (keyLength.value <= limits.keptPartMaxBytes) {
      key = Buffer.concat([keyLength.raw, yield* readBytes(cursor, keyLength.value)]);
    } else {
      yield* skipBytes(cursor, keyLength.value);
    }
    read += keyLength.value;
  } else if (keyLength.value === 0) {
    key = keyLength.raw;
  }
  const valueLength = yield* readZigzag(cursor);
  read += valueLength.raw.length;
  if (valueLength.value > 0) {
    yield* skipBytes(cursor, valueLength.value);
    read += valueLength.value;
  }
  const rest = length - read;
  if (rest < 1) throw new RecordSplitError('a record ends before its headers');
  let headerCount = 0;
  let headers: Buffer = Buffer.alloc(0);
  if (rest <= limits.keptPartMaxBytes) {
    const part = yield* readBytes(cursor, rest);
    const inner = new Cursor();
    inner.chunk = part;
    const count = readZigzag(inner).next();
    if (!count.done) throw new RecordSplitError('a record ends inside its header count');
    headerCount = Math.max(0, count.value.value);
    headers = part.subarray(inner.pos);
  } else {
    yield* skipBytes(cursor, rest);
  }
  const name = Buffer.from(limits.marker);
  const value = Buffer.from(`${limits.markerPrefix}${length}:${valueLength.value}`);
  const body = Buffer.concat([
    attributes,
    timestamp,
    offset.raw,
    key,
    zigzagVarint(-1),
    zigzagVarint(headerCount + 1),
    headers,
    zigzagVarint(name.length),
    name,
    zigzagVarint(value.length),
    value,
  ]);
  return {
    body,
    offsetDelta: offset.value,
    oversizedBytes: length,
    oversizedValueBytes: valueLength.value,
  };
}

/**
 * Feeds chunks of a decompressed records section and hands out its records in order.
 * `push` throws RecordSplitError when the bytes are not a records section.
 */
export class RecordSplitter {
  readonly #cursor = new Cursor();
  readonly #limits: SplitterLimits;
  /** Records the batch declares: bytes after the last of them are not looked at. */
  readonly #count: number;
  #read = 0;
  /** The record being read across chunks, if any. */
  #pending: Read<SplitRecord> | undefined;

  constructor(limits: SplitterLimits, count = Number.POSITIVE_INFINITY) {
    this.#limits = limits;
    this.#count = count;
  }

  /** Records read so far. */
  get read(): number {
    return this.#read;
  }

  /** Whether every declared record was read. */
  get done(): boolean {
    return this.#read >= this.#count;
  }

  /** Adds the next chunk; returns the records completed by it. */
  push(chunk: Uint8Array): SplitRecord[] {
    const cursor = this.#cursor;
    cursor.chunk = chunk;
    cursor.pos = 0;
    const records: SplitRecord[] = [];
    while (cursor.available > 0 && !this.done) {
      if (this.#pending === undefined) {
        // Most records lie whole in one chunk: read those without the resumable reader.
        const whole = this.#wholeAt(chunk, cursor.pos);
        if (whole !== undefined) {
          records.push(whole.record);
          this.#read += 1;
          cursor.pos = whole.end;
          continue;
        }
        this.#pending = readRecord(cursor, this.#limits);
      }
      const step = this.#pending.next();
      if (step.done) {
        records.push(step.value);
        this.#read += 1;
        this.#pending = undefined;
      }
    }
    return records;
  }

  #wholeAt(chunk: Uint8Array, at: number): { record: SplitRecord; end: number } | undefined {
    const length = peekZigzag(chunk, at, 5);
    if (length === undefined) return undefined;
    const [size, start] = length;
    if (size < 0 || size > this.#limits.wholeRecordMaxBytes || start + size > chunk.length) {
      return undefined;
    }
    // A copy: chunks may be reused for the next piece of the batch.
    const body = Buffer.from(chunk.subarray(start, start + size));
    return { record: { body, offsetDelta: offsetDeltaOf(body) }, end: start + size };
  }
}
