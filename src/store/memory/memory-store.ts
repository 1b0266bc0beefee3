/**
 * The in-process store: the same GCRA and fixed-window math as the Redis scripts (gcra.ts,
 * fixed-window.ts), all-or-nothing per call, on an injected clock, in a bounded LRU table.
 *
 * A call runs synchronously between two awaits, so it is atomic in one Node process: phase 1
 * evaluates every Take, phase 2 writes every bucket only when all were allowed (cost 0 never writes).
 * Several Takes of one call on the same key see each other's charge, exactly as in the Lua scripts.
 */
import type { Clock } from "../../engine/types.js";
import type { Outcome, Store, Take } from "../store.js";
import { BucketTable } from "./buckets.js";
import { fixedWindowRefund, fixedWindowStep } from "./fixed-window.js";
import { gcraRefund, gcraStep } from "./gcra.js";

/** Options of {@link MemoryStore}. */
export interface MemoryStoreOptions {
  /** Time source; `Math.floor(clock.now() * 1000)` is "now" in µs. */
  readonly clock: Clock;
  /** Maximum number of live buckets; idle ones are evicted least recently used first. @default 1000000 */
  readonly maxBuckets?: number;
  /** Minimum clock time between two sweeps of expired buckets, in ms. @default 10000 */
  readonly sweepIntervalMs?: number;
}

/** A planned write of phase 2: the new state of one key and when it expires. */
interface Pending {
  value: number;
  expiresAtMs: number;
}

/** One Take evaluated in phase 1. */
interface Evaluated {
  readonly outcome: Outcome;
  readonly uncharged: Outcome;
  readonly write: Pending | undefined;
}

/** Phase 1 for one Take against its stored (or pending) state. */
function evaluate(take: Take, stored: Pending | undefined, nowUs: number): Evaluated {
  const nowMs = Math.floor(nowUs / 1000);
  const input = { nowUs, cost: take.cost, policy: take.policy };
  if (take.policy.algorithm === "gcra") {
    const step = gcraStep({ ...input, storedTat: stored?.value });
    const w = step.write;
    return { ...step, write: w && { value: w.tat, expiresAtMs: nowMs + w.ttlMs } };
  }
  const step = fixedWindowStep({ ...input, storedCount: stored?.value });
  const w = step.write;
  // A new counter expires at the window end; an increment keeps the counter's TTL.
  return { ...step, write: w && { value: w.count, expiresAtMs: stored?.expiresAtMs ?? nowMs + w.ttlMs } };
}

/** In-process {@link Store}; see the module comment. */
export class MemoryStore implements Store {
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
    const nowUs = Math.floor(this.#clock.now() * 1000);
    const nowMs = Math.floor(nowUs / 1000);
    this.#buckets.sweep(nowMs);
    const pending = new Map<string, Pending>();
    const evaluated: Evaluated[] = [];
    for (const take of takes) {
      const stored = pending.get(take.key) ?? this.#buckets.get(take.key, nowMs);
      const e = evaluate(take, stored, nowUs);
      evaluated.push(e);
      if (e.write) pending.set(take.key, e.write);
    }
    if (!evaluated.every((e) => e.outcome.allowed)) {
      // Nothing is charged: allowed Takes report their bucket as it is (see Outcome).
      return evaluated.map((e) => (e.outcome.allowed ? e.uncharged : e.outcome));
    }
    for (const [key, p] of pending) this.#buckets.set(key, p.value, p.expiresAtMs, nowMs);
    return evaluated.map((e) => e.outcome);
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
        else if (next) this.#buckets.set(take.key, next.tat, nowMs + next.ttlMs, nowMs);
      } else {
        const count = fixedWindowRefund(stored.value, take.cost);
        if (count !== undefined) this.#buckets.set(take.key, count, stored.expiresAtMs, nowMs);
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
