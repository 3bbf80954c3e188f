/**
 * Reading Snappy as Kafka clients write it, a piece at a time: the decompressed bytes
 * are handed out as they are produced and never held whole, so a record batch that
 * expands twentyfold costs a window of memory, not twenty times the batch.
 *
 * The Java client frames raw Snappy blocks in xerial's stream format (a magic, then
 * length-prefixed blocks); librdkafka (kcat) and franz-go write one raw block for the
 * whole records section. A raw block is a varint of its decompressed length, then
 * literals and copies; a copy reaches back into what was already decompressed.
 * Only the last SNAPPY_WINDOW bytes are kept for the copies to read back into; a copy
 * reaching further is refused as damage.
 */
import { CodecError } from './codec-error.ts';

/** The Snappy framing of the Java client (xerial snappy-java's SnappyOutputStream). */
const XERIAL_MAGIC = Buffer.from([0x82, 0x53, 0x4e, 0x41, 0x50, 0x50, 0x59, 0x00]);
/** Magic, then the stream version and the oldest compatible version, big-endian int32s. */
const XERIAL_HEADER_LENGTH = XERIAL_MAGIC.length + 8;
/**
 * How far back a copy may reach. The reference compressor and its ports cut their input
 * into 64 KiB fragments, but Go's s2 (franz-go's Snappy) matches across a whole block,
 * so the window covers a batch of up to 8 MiB decompressed, the most any client writes
 * by default many times over.
 */
export const SNAPPY_WINDOW = 8 * 1024 * 1024;
/** Bytes decompressed between two hand-outs: the largest piece handed out. */
export const FLUSH_BYTES = 256 * 1024;
/** The window starts this small and grows as output needs it: most batches are small. */
const FIRST_CAPACITY = 64 * 1024;

function damaged(reason: string): never {
  throw new CodecError(`snappy: ${reason}`);
}

/** Where decompressed bytes go: a window the copies read back into, handed out in pieces. */
class Window {
  bytes = new Uint8Array(FIRST_CAPACITY);
  /** End of the decompressed bytes in `bytes`. */
  end = 0;
  /** Start of what was not handed out yet. */
  pending = 0;
  /** Bytes decompressed in all. */
  total = 0;

  /** Whether the window is as large as it gets and full. */
  get full(): boolean {
    return this.end >= SNAPPY_WINDOW + FLUSH_BYTES;
  }

  /** Room for `bytes` more, growing up to its largest size. */
  reserve(bytes: number): void {
    const needed = this.end + bytes;
    if (needed <= this.bytes.length) return;
    const grown = new Uint8Array(
      Math.min(SNAPPY_WINDOW + FLUSH_BYTES, Math.max(needed, this.bytes.length * 2)),
    );
    grown.set(this.bytes.subarray(0, this.end));
    this.bytes = grown;
  }

  /** What was decompressed since the last hand-out; valid until the next write. */
  take(): Uint8Array {
    const out = this.bytes.subarray(this.pending, this.end);
    this.pending = this.end;
    return out;
  }

  /** Keeps only the last SNAPPY_WINDOW bytes, once everything was handed out. */
  slide(): void {
    const keep = Math.min(SNAPPY_WINDOW, this.end);
    this.bytes.copyWithin(0, this.end - keep, this.end);
    this.end = keep;
    this.pending = keep;
  }
}

function readVarint32(src: Uint8Array, at: number): [number, number] {
  let value = 0;
  let scale = 1;
  let pos = at;
  for (let i = 0; i < 5; i++) {
    if (pos >= src.length) damaged('block truncated inside its length');
    const byte = src[pos++] ?? 0;
    value += (byte & 0x7f) * scale;
    if ((byte & 0x80) === 0) return [value, pos];
    scale *= 128;
  }
  return damaged('block length varint too long');
}

function readLittleEndian(src: Uint8Array, at: number, bytes: number): number {
  if (at + bytes > src.length) damaged('block truncated inside an element');
  let value = 0;
  for (let i = bytes - 1; i >= 0; i--) value = value * 256 + (src[at + i] ?? 0);
  return value;
}

/** Decompresses one raw Snappy block, handing out pieces of at most FLUSH_BYTES. */
function* rawBlockChunks(src: Uint8Array, out: Window): Generator<Uint8Array, void, undefined> {
  const [declared, start] = readVarint32(src, 0);
  const blockStart = out.total;
  let s = start;
  while (s < src.length) {
    const tag = src[s++] ?? 0;
    let length: number;
    let offset = 0;
    switch (tag & 3) {
      case 0: {
        length = tag >>> 2;
        if (length >= 60) {
          const extra = length - 59;
          length = readLittleEndian(src, s, extra);
          s += extra;
        }
        length += 1;
        if (length > src.length - s) damaged('a literal runs past the end of the block');
        break;
      }
      case 1:
        length = 4 + ((tag >>> 2) & 7);
        offset = ((tag >>> 5) << 8) | readLittleEndian(src, s, 1);
        s += 1;
        break;
      case 2:
        length = (tag >>> 2) + 1;
        offset = readLittleEndian(src, s, 2);
        s += 2;
        break;
      default:
        length = (tag >>> 2) + 1;
        offset = readLittleEndian(src, s, 4);
        s += 4;
        break;
    }
    if (out.total - blockStart + length > declared) {
      damaged(`block decodes to more than the ${declared} bytes it declares`);
    }
    let left = length;
    while (left > 0) {
      if (out.end - out.pending >= FLUSH_BYTES) yield out.take();
      // Full only right after a hand-out (the window is a whole number of hand-outs).
      if (out.full) out.slide();
      const room = Math.min(left, FLUSH_BYTES - (out.end - out.pending));
      out.reserve(room);
      if ((tag & 3) === 0) {
        out.bytes.set(src.subarray(s, s + room), out.end);
        s += room;
      } else {
        if (offset === 0 || offset > out.total - blockStart) {
          damaged(`a copy reaches back ${offset} bytes`);
        }
        if (offset > out.end) damaged(`a copy reaches back ${offset} bytes, past ${SNAPPY_WINDOW}`);
        const from = out.end - offset;
        if (offset >= room) {
          out.bytes.copyWithin(out.end, from, from + room);
        } else {
          for (let i = 0; i < room; i++) out.bytes[out.end + i] = out.bytes[from + i] ?? 0;
        }
      }
      out.end += room;
      out.total += room;
      left -= room;
    }
  }
  if (out.total - blockStart !== declared) {
    damaged(`block declares ${declared} bytes but holds ${out.total - blockStart}`);
  }
}

/**
 * The decompressed content of a Snappy records section (xerial-framed or one raw
 * block), a piece at a time; each piece is valid until the next one is asked for.
 * @throws CodecError naming what is wrong with the buffer.
 */
export function* snappyChunks(input: Uint8Array): Generator<Uint8Array, void, undefined> {
  const out = new Window();
  const xerial =
    input.length >= XERIAL_MAGIC.length &&
    Buffer.from(input.buffer, input.byteOffset, XERIAL_MAGIC.length).equals(XERIAL_MAGIC);
  if (!xerial) {
    yield* rawBlockChunks(input, out);
  } else {
    if (input.length < XERIAL_HEADER_LENGTH) damaged('xerial header truncated');
    const view = Buffer.from(input.buffer, input.byteOffset, input.byteLength);
    let pos = XERIAL_HEADER_LENGTH;
    while (pos < input.length) {
      if (input.length - pos < 4) damaged('xerial block length truncated');
      const length = view.readInt32BE(pos);
      pos += 4;
      if (length < 0 || length > input.length - pos) {
        damaged(`xerial block of ${length} bytes runs past the buffer`);
      }
      yield* rawBlockChunks(input.subarray(pos, pos + length), out);
      pos += length;
    }
  }
  if (out.end > out.pending) yield out.take();
}
