/**
 * The bounded bucket table of the in-process store: at most `maxBuckets` entries, least recently
 * used evicted first, each entry expiring at an absolute time on the injected clock.
 *
 * A Map in recency order (a hit or write moves the key to the end; the first key is the least
 * recently used). Not lru-cache: it preallocates arrays of `maxBuckets` slots and refills all of them
 * whenever its last entry is deleted, so with the 1,000,000 default every request of a quiet service
 * whose buckets had expired paid ~3 ms per descriptor (bench/RESULTS.md, "Latency at low load").
 * Memory now follows the live buckets, not the bound.
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
  /** Maximum number of live buckets; the least recently used is evicted beyond it. */
  readonly maxBuckets: number;
  /** Minimum clock time between two sweeps of expired entries, in ms. @default 10000 */
  readonly sweepIntervalMs?: number;
}

/** A bounded map of bucket key to state with exact expiry on an injected clock. */
export class BucketTable {
  readonly #map = new Map<string, BucketEntry>();
  readonly #max: number;
  readonly #sweepIntervalMs: number;
  #lastSweepMs: number;

  constructor(options: BucketTableOptions) {
    if (!Number.isInteger(options.maxBuckets) || options.maxBuckets < 1) {
      throw new RangeError(`maxBuckets must be a positive integer, got ${options.maxBuckets}`);
    }
    this.#max = options.maxBuckets;
    this.#sweepIntervalMs = options.sweepIntervalMs ?? 10_000;
    this.#lastSweepMs = options.clock.now();
  }

  /** Number of entries held, expired-but-unswept ones included. */
  get size(): number {
    return this.#map.size;
  }

  /** The live entry of `key` at `nowMs`, or undefined when absent or expired (expired ones are dropped). */
  get(key: string, nowMs: number): BucketEntry | undefined {
    const entry = this.#map.get(key);
    if (entry === undefined) return undefined;
    this.#map.delete(key);
    if (nowMs >= entry.expiresAtMs) return undefined;
    this.#map.set(key, entry); // most recently used: to the end
    return entry;
  }

  /** Store `value` for `key` until `expiresAtMs` (absolute ms on the store's clock). */
  set(key: string, value: number, expiresAtMs: number): void {
    const map = this.#map;
    map.delete(key);
    map.set(key, { value, expiresAtMs });
    if (map.size > this.#max) {
      const oldest = map.keys().next();
      if (!oldest.done) map.delete(oldest.value);
    }
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
