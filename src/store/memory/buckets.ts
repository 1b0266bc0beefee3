/**
 * The bounded bucket table of the in-process store: at most `maxBuckets` entries, idle ones
 * evicted first (least recently used, to within half the table), each entry expiring at an absolute time on the injected clock.
 *
 * A Map in recency order, the least recently placed entry first, where a hit moves its entry to the
 * end only when the entry sits in the older half of the order (more than maxBuckets / 2 placements
 * ago; each slot remembers its placement number). A key used within the last maxBuckets / 2
 * insertions is therefore never evicted, as with a strict LRU, but a busy key costs one Map lookup per
 * hit instead of the delete and re-insert a strict LRU pays on every hit; writes update the entry in
 * place. Eviction drops the first entry. Not lru-cache: it preallocates arrays of `maxBuckets` slots
 * and refills all of them whenever its last entry is deleted, so with the 1,000,000 default every
 * request of a quiet service whose buckets had expired paid milliseconds per descriptor
 * (docs/decisions/bucket-table.md). Memory follows the live buckets, not the bound.
 *
 * Expiry is checked here, exactly (`nowMs >= expiresAtMs` is absent, as a Redis key whose PX ran
 * out). The sweep that frees expired entries runs from the request path at most once per
 * `sweepIntervalMs` of clock time, so no timer is needed and a fake clock drives it in tests.
 */
import type { Clock } from "../../engine/types.js";

/** One stored bucket: its state (GCRA tat in µs, or a window counter) and when it vanishes. */
export interface BucketEntry {
  readonly value: number;
  /** Absolute expiry in ms on the store's clock. */
  readonly expiresAtMs: number;
}

/** Options of {@link BucketTable}. */
export interface BucketTableOptions {
  readonly clock: Clock;
  /** Maximum number of live buckets; the least recently used goes beyond it (see above). */
  readonly maxBuckets: number;
  /** Minimum clock time between two sweeps of expired entries, in ms. @default 10000 */
  readonly sweepIntervalMs?: number;
}

/** A table entry: BucketEntry plus its placement number; updated in place by writes. */
interface Slot {
  value: number;
  expiresAtMs: number;
  placed: number;
}

/** A bounded map of bucket key to state with exact expiry on an injected clock. */
export class BucketTable {
  readonly #map = new Map<string, Slot>();
  readonly #max: number;
  /** A hit moves its entry to the end once more than this many placements came after it. */
  readonly #refreshAfter: number;
  readonly #sweepIntervalMs: number;
  #lastSweepMs: number;
  /** Placements so far (inserts and moves to the end). */
  #placements = 0;

  constructor(options: BucketTableOptions) {
    if (!Number.isInteger(options.maxBuckets) || options.maxBuckets < 1) {
      throw new RangeError(`maxBuckets must be a positive integer, got ${options.maxBuckets}`);
    }
    this.#max = options.maxBuckets;
    this.#refreshAfter = Math.floor(options.maxBuckets / 2);
    this.#sweepIntervalMs = options.sweepIntervalMs ?? 10_000;
    this.#lastSweepMs = options.clock.now();
  }

  /** Number of entries held, expired-but-unswept ones included. */
  get size(): number {
    return this.#map.size;
  }

  /**
   * The live entry of `key` at `nowMs`, or undefined when absent or expired (expired ones are
   * dropped). The entry is valid until the next `set` of the same key, which updates it in place.
   */
  get(key: string, nowMs: number): BucketEntry | undefined {
    const slot = this.#map.get(key);
    if (slot === undefined) return undefined;
    if (nowMs >= slot.expiresAtMs) {
      this.#map.delete(key);
      return undefined;
    }
    this.#used(key, slot);
    return slot;
  }

  /** Store `value` for `key` until `expiresAtMs` (absolute ms on the store's clock). */
  set(key: string, value: number, expiresAtMs: number): void {
    const map = this.#map;
    const slot = map.get(key);
    if (slot !== undefined) {
      slot.value = value;
      slot.expiresAtMs = expiresAtMs;
      this.#used(key, slot);
      return;
    }
    // Evict before inserting, so the new entry is never the one evicted.
    if (map.size >= this.#max) {
      const oldest = map.keys().next();
      if (!oldest.done) map.delete(oldest.value);
    }
    map.set(key, { value, expiresAtMs, placed: this.#placements++ });
  }

  /** A hit: move the entry to the end when it has drifted into the older half of the order. */
  #used(key: string, slot: Slot): void {
    if (this.#placements - slot.placed <= this.#refreshAfter) return;
    this.#map.delete(key);
    slot.placed = this.#placements++;
    this.#map.set(key, slot);
  }

  delete(key: string): void {
    this.#map.delete(key);
  }

  /** Drop every expired entry, at most once per sweep interval of clock time. */
  sweep(nowMs: number): void {
    if (nowMs - this.#lastSweepMs < this.#sweepIntervalMs) return;
    this.#lastSweepMs = nowMs;
    for (const [key, entry] of this.#map) if (nowMs >= entry.expiresAtMs) this.#map.delete(key);
  }

  clear(): void {
    this.#map.clear();
  }
}
