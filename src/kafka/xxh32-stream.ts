/**
 * xxHash32 fed in pieces (the algorithm of github.com/Cyan4973/xxHash, seed 0 by
 * default): an LZ4 frame's content checksum covers the whole decompressed content,
 * which the frame reader hands out block by block without keeping it.
 */
const PRIME1 = 0x9e3779b1;
const PRIME2 = 0x85ebca77;
const PRIME3 = 0xc2b2ae3d;
const PRIME4 = 0x27d4eb2f;
const PRIME5 = 0x165667b1;

function rotl(x: number, r: number): number {
  return (x << r) | (x >>> (32 - r));
}

function round(acc: number, lane: number): number {
  return Math.imul(rotl((acc + Math.imul(lane, PRIME2)) | 0, 13), PRIME1);
}

function lane(bytes: Uint8Array, at: number): number {
  return (
    (bytes[at] ?? 0) |
    ((bytes[at + 1] ?? 0) << 8) |
    ((bytes[at + 2] ?? 0) << 16) |
    ((bytes[at + 3] ?? 0) << 24)
  );
}

export class Xxh32 {
  #v1: number;
  #v2: number;
  #v3: number;
  #v4: number;
  readonly #seed: number;
  #total = 0;
  /** Bytes of an unfinished 16-byte stripe. */
  readonly #tail = new Uint8Array(16);
  #tailLength = 0;

  constructor(seed = 0) {
    this.#seed = seed | 0;
    this.#v1 = (this.#seed + PRIME1 + PRIME2) | 0;
    this.#v2 = (this.#seed + PRIME2) | 0;
    this.#v3 = this.#seed;
    this.#v4 = (this.#seed - PRIME1) | 0;
  }

  #stripe(bytes: Uint8Array, at: number): void {
    this.#v1 = round(this.#v1, lane(bytes, at));
    this.#v2 = round(this.#v2, lane(bytes, at + 4));
    this.#v3 = round(this.#v3, lane(bytes, at + 8));
    this.#v4 = round(this.#v4, lane(bytes, at + 12));
  }

  update(bytes: Uint8Array): this {
    this.#total += bytes.length;
    let at = 0;
    if (this.#tailLength > 0) {
      const take = Math.min(16 - this.#tailLength, bytes.length);
      this.#tail.set(bytes.subarray(0, take), this.#tailLength);
      this.#tailLength += take;
      at = take;
      if (this.#tailLength < 16) return this;
      this.#stripe(this.#tail, 0);
      this.#tailLength = 0;
    }
    for (; at + 16 <= bytes.length; at += 16) this.#stripe(bytes, at);
    this.#tail.set(bytes.subarray(at), 0);
    this.#tailLength = bytes.length - at;
    return this;
  }

  /** The hash of everything fed so far, as an unsigned 32-bit number. */
  digest(): number {
    let h =
      this.#total >= 16
        ? rotl(this.#v1, 1) + rotl(this.#v2, 7) + rotl(this.#v3, 12) + rotl(this.#v4, 18)
        : this.#seed + PRIME5;
    h = (h + this.#total) | 0;
    let at = 0;
    for (; at + 4 <= this.#tailLength; at += 4) {
      h = Math.imul(rotl((h + Math.imul(lane(this.#tail, at), PRIME3)) | 0, 17), PRIME4);
    }
    for (; at < this.#tailLength; at++) {
      h = Math.imul(rotl((h + Math.imul(this.#tail[at] ?? 0, PRIME5)) | 0, 11), PRIME1);
    }
    h ^= h >>> 15;
    h = Math.imul(h, PRIME2);
    h ^= h >>> 13;
    h = Math.imul(h, PRIME3);
    h ^= h >>> 16;
    return h >>> 0;
  }
}
