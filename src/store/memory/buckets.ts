/**
 * The bounded bucket table of the in-process store: at most `maxBuckets` entries, least recently
 * used evicted first (lru-cache), each entry expiring at an absolute time on the injected clock.
 *
 * Expiry is checked here, exactly (`nowMs >= expiresAtMs` is absent, as a Redis key whose PX ran
 * out); lru-cache's own TTL, bound to the same clock, lets `purgeStale()` free expired entries.
 * The sweep runs from the request path at most once per `sweepIntervalMs` of clock time, so no timer
 * is needed and a fake clock drives it in tests.
 */
import { LRUCache } from "lru-cache";
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
  readonly #cache: LRUCache<string, BucketEntry>;
  readonly #clock: Clock;
  readonly #sweepIntervalMs: number;
  #lastSweepMs: number;

  constructor(options: BucketTableOptions) {
    if (!Number.isInteger(options.maxBuckets) || options.maxBuckets < 1) {
      throw new RangeError(`maxBuckets must be a positive integer, got ${options.maxBuckets}`);
    }
    this.#clock = options.clock;
    this.#sweepIntervalMs = options.sweepIntervalMs ?? 10_000;
    this.#lastSweepMs = options.clock.now();
    this.#cache = new LRUCache<string, BucketEntry>({
      max: options.maxBuckets,
      // ttlResolution 0: never cache "now" behind a timer; read the injected clock every time.
      ttlResolution: 0,
      perf: { now: () => this.#clock.now() },
    });
  }

  /** Number of entries held, expired-but-unswept ones included. */
  get size(): number {
    return this.#cache.size;
  }

  /** The live entry of `key` at `nowMs`, or undefined when absent or expired (expired ones are dropped). */
  get(key: string, nowMs: number): BucketEntry | undefined {
    const entry = this.#cache.get(key);
    if (entry === undefined) return undefined;
    if (nowMs >= entry.expiresAtMs) {
      this.#cache.delete(key);
      return undefined;
    }
    return entry;
  }

  /** Store `value` for `key` until `expiresAtMs`; `nowMs` is the caller's reading of the clock. */
  set(key: string, value: number, expiresAtMs: number, nowMs: number): void {
    const ttl = Math.max(1, Math.ceil(expiresAtMs - nowMs));
    this.#cache.set(key, { value, expiresAtMs }, { ttl });
  }

  delete(key: string): void {
    this.#cache.delete(key);
  }

  /** Drop every expired entry, at most once per sweep interval of clock time. */
  sweep(nowMs: number): void {
    if (nowMs - this.#lastSweepMs < this.#sweepIntervalMs) return;
    this.#lastSweepMs = nowMs;
    this.#cache.purgeStale();
  }

  clear(): void {
    this.#cache.clear();
  }
}
