/**
 * A seeded pseudo-random source (mulberry32) for reproducible fuzz rounds: the same seed gives the
 * same inputs, so a failure names its seed and can be replayed.
 */

const ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789";

/** Random helpers over one seeded stream. */
export class Prng {
  #state: number;

  constructor(readonly seed: number) {
    this.#state = seed >>> 0;
  }

  /** Uniform in [0, 1). */
  next(): number {
    this.#state = (this.#state + 0x6d2b79f5) >>> 0;
    let t = this.#state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  }

  /** Integer in [lo, hi] (both inclusive). */
  int(lo: number, hi: number): number {
    return lo + Math.floor(this.next() * (hi - lo + 1));
  }

  pick<T>(items: readonly T[]): T {
    const item = items[this.int(0, items.length - 1)];
    if (item === undefined) throw new RangeError("pick from an empty list");
    return item;
  }

  bytes(length: number): Buffer {
    const out = Buffer.allocUnsafe(length);
    for (let i = 0; i < length; i++) out[i] = this.int(0, 255);
    return out;
  }

  /** Printable ASCII letters and digits. */
  word(length: number): string {
    const out = Buffer.allocUnsafe(length);
    for (let i = 0; i < length; i++) out[i] = ALPHABET.charCodeAt(this.int(0, ALPHABET.length - 1));
    return out.toString("latin1");
  }
}
