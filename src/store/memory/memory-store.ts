/**
 * The in-process store: the same GCRA and fixed-window math as the Redis scripts (gcra.ts,
 * fixed-window.ts), all-or-nothing per call, on an injected clock, in a bounded LRU table.
 *
 * A call runs synchronously between two awaits, so it is atomic in one Node process; the
 * all-or-nothing evaluation itself is `evaluateCall` (call.ts), the spec of one script call.
 */
import type { Clock } from "../../engine/types.js";
import type { Grant, LeaseBackend } from "../lease/backend.js";
import type { Outcome, Store, Take } from "../store.js";
import { BucketTable } from "./buckets.js";
import { evaluateCall } from "./call.js";
import { fixedWindowRefund } from "./fixed-window.js";
import { gcraRefund } from "./gcra.js";

/** Options of {@link MemoryStore}. */
export interface MemoryStoreOptions {
  /** Time source; `Math.floor(clock.now() * 1000)` is "now" in µs. */
  readonly clock: Clock;
  /** Maximum number of live buckets; idle ones are evicted first (approximately least recently used). @default 1000000 */
  readonly maxBuckets?: number;
  /** Minimum clock time between two sweeps of expired buckets, in ms. @default 10000 */
  readonly sweepIntervalMs?: number;
}

/** In-process {@link Store}; see the module comment. */
export class MemoryStore implements Store, LeaseBackend {
  readonly kind = "memory";
  readonly #clock: Clock;
  readonly #buckets: BucketTable;

  constructor(options: MemoryStoreOptions) {
    this.#clock = options.clock;
    this.#buckets = new BucketTable({
      clock: options.clock,
      maxBuckets: options.maxBuckets ?? 1_000_000,
      ...(options.sweepIntervalMs === undefined ? {} : { sweepIntervalMs: options.sweepIntervalMs }),
    });
  }

  /** Number of buckets held (for tests and diagnostics). */
  get size(): number {
    return this.#buckets.size;
  }

  async take(takes: readonly Take[]): Promise<Outcome[]> {
    return this.takeNow(takes);
  }

  /** Always answers: the in-process store never waits. */
  takeNow(takes: readonly Take[]): Outcome[] {
    const nowUs = Math.floor(this.#clock.now() * 1000);
    const nowMs = Math.floor(nowUs / 1000);
    this.#buckets.sweep(nowMs);
    const { outcomes, writes } = evaluateCall(takes, (key) => this.#buckets.get(key, nowMs), nowUs);
    for (const [key, w] of writes) this.#buckets.set(key, w.value, w.expiresAtMs);
    return outcomes;
  }

  /**
   * Take up to `take.cost` tokens for a local lease: whatever the bucket holds, possibly 0. The same
   * math as lua/lease.lua: a peek, then a charge of what is there, in one synchronous step.
   */
  async grant(take: Take): Promise<Grant> {
    const nowUs = Math.floor(this.#clock.now() * 1000);
    const nowMs = Math.floor(nowUs / 1000);
    this.#buckets.sweep(nowMs);
    const read = (key: string) => this.#buckets.get(key, nowMs);
    const peek = evaluateCall([{ ...take, cost: 0 }], read, nowUs).outcomes[0];
    const granted = Math.min(take.cost, peek?.remaining ?? 0);
    if (granted <= 0)
      return { granted: 0, remaining: peek?.remaining ?? 0, resetAfterMs: peek?.resetAfterMs ?? 0 };
    const { outcomes, writes } = evaluateCall([{ ...take, cost: granted }], read, nowUs);
    for (const [key, w] of writes) this.#buckets.set(key, w.value, w.expiresAtMs);
    return { granted, remaining: outcomes[0]?.remaining ?? 0, resetAfterMs: outcomes[0]?.resetAfterMs ?? 0 };
  }

  /** Give `cost` tokens back to each bucket (cross-slot compensation, lease returns). */
  async refund(takes: readonly Take[]): Promise<void> {
    const nowUs = Math.floor(this.#clock.now() * 1000);
    const nowMs = Math.floor(nowUs / 1000);
    for (const take of takes) {
      const stored = this.#buckets.get(take.key, nowMs);
      if (stored === undefined || take.cost <= 0) continue;
      if (take.policy.algorithm === "gcra") {
        const next = gcraRefund({ storedTat: stored.value, nowUs, cost: take.cost, policy: take.policy });
        if (next === "delete") this.#buckets.delete(take.key);
        else if (next) this.#buckets.set(take.key, next.tat, next.expiresAtMs);
      } else {
        const count = fixedWindowRefund(stored.value, take.cost);
        if (count !== undefined) this.#buckets.set(take.key, count, stored.expiresAtMs);
      }
    }
  }

  async reset(keys: readonly string[]): Promise<void> {
    for (const key of keys) this.#buckets.delete(key);
  }

  async ready(): Promise<void> {}

  async close(): Promise<void> {
    this.#buckets.clear();
  }
}
