/**
 * Two-tier limiting: a decorator that serves takes marked with `lease` from tokens this instance took
 * from the shared bucket in batches (one script call per batch), so a hot key costs the shared store a
 * few calls a second instead of one per request.
 *
 * Guarantees (see docs/lease.md):
 * - Never over-admits: tokens are taken from the shared bucket before they are spent.
 * - Stranded quota — tokens leased but unused — is at most instances × `lease.size` per key, and
 *   goes back when the lease expires (`lease.ttl`; an idle key's lease expires too) and on close().
 * - A take needing more than the lease holds asks the shared store for the rest in the same call.
 * - All-or-nothing per call: local tokens are reserved and released if any bucket of the call denies.
 * - Refills are single-flight per key per instance, and start ahead of need (below a quarter lease).
 * - When the shared store fails, tokens already leased keep serving; then takes go to `inner` (the
 *   guard), whose failure policy decides.
 * - Remaining/reset on a leased bucket are estimates (the shared count at the last grant plus ours).
 *
 * The leases held, their expiry and the return of their tokens: lease-table.ts; one refill: refill.ts.
 */
import type { Clock, LeaseOptions } from "../../engine/types.js";
import { isForced, type Outcome, type Store, type Take } from "../store.js";
import type { LeaseBackend } from "./backend.js";
import type { Lease } from "./lease.js";
import { LeaseTable } from "./lease-table.js";
import { refillLease } from "./refill.js";

export interface LeaseMetrics {
  leaseGranted(tokens: number): void;
  leaseReturned(tokens: number): void;
  leaseLocalHit(): void;
  leaseLocalMiss(): void;
}

export interface LeasedStoreOptions {
  /** Where takes that are not leased (and leased ones the lease cannot serve on failure) go. */
  readonly inner: Store;
  /** Grants and returns: the shared store itself (not the guard). */
  readonly backend: LeaseBackend;
  readonly clock: Clock;
  readonly metrics?: LeaseMetrics;
  /** Lease for takes that carry none (setting `--lease-size`/`--lease-ttl`). @default off */
  readonly defaultLease?: LeaseOptions;
  /** Whether the shared store is worth asking now (e.g. the guard's breaker is closed). @default always */
  readonly available?: () => boolean;
  /** A grant not answered by then counts as failed. @default 10 (ms) */
  readonly grantDeadlineMs?: number;
  /** How often expired leases are returned. @default 250 (ms) */
  readonly sweepIntervalMs?: number;
}

const NO_METRICS: LeaseMetrics = {
  leaseGranted() {},
  leaseReturned() {},
  leaseLocalHit() {},
  leaseLocalMiss() {},
};
const isLeased = (t: Take): boolean => t.lease !== undefined;

/**
 * The lease of a take: its own, else the default one; none for a calendar window (config refuses
 * `lease` with `calendar`, and lease.lua knows only epoch-aligned windows), which goes to the store.
 */
const leaseOptions = (t: Take, defaultLease: LeaseOptions | undefined): LeaseOptions | undefined =>
  t.policy.calendar === undefined ? (t.lease ?? defaultLease) : undefined;

export class LeasedStore implements Store {
  readonly kind: string;
  readonly #o: LeasedStoreOptions;
  readonly #metrics: LeaseMetrics;
  readonly #leases: LeaseTable;
  readonly #timer: NodeJS.Timeout;

  constructor(options: LeasedStoreOptions) {
    this.#o = options;
    this.kind = `lease(${options.inner.kind})`;
    this.#metrics = options.metrics ?? NO_METRICS;
    this.#leases = new LeaseTable(options, this.#metrics);
    this.#timer = setInterval(() => this.sweep(), options.sweepIntervalMs ?? 250);
    this.#timer.unref();
  }

  /** Leases held (for tests and diagnostics). */
  get leases(): ReadonlyMap<string, Lease> {
    return this.#leases.all;
  }

  take(takes: readonly Take[]): Promise<Outcome[]> {
    // No leased take at all (the common case without `lease` rules): straight to the inner store.
    return this.#o.defaultLease || takes.some(isLeased) ? this.#take(takes) : this.#o.inner.take(takes);
  }

  async #take(takes: readonly Take[]): Promise<Outcome[]> {
    const out: (Outcome | undefined)[] = new Array(takes.length);
    const reserved: { lease: Lease; cost: number }[] = [];
    const direct: number[] = [];
    const refills: Promise<void>[] = [];
    const waiting: { index: number; lease: Lease; cost: number }[] = [];
    const now = this.#o.clock.now();

    takes.forEach((t, index) => {
      const options = leaseOptions(t, this.#o.defaultLease);
      // Checks, refunds and overdraft charges go to the shared bucket directly: a lease holds tokens
      // taken before they are spent, which cannot pay a debt, and an overdraft charge must land.
      if (!options || options.size <= 1 || t.cost <= 0 || t.policy.maxDebt !== undefined) {
        direct.push(index);
        return;
      }
      const lease = this.#leases.lease(t, options, now);
      // Tokens of a fixed window that has ended (a refill kept the lease) may not be spent.
      if (now >= lease.windowEndMs) lease.tokens = 0;
      if (lease.tokens >= t.cost) {
        lease.tokens -= t.cost;
        reserved.push({ lease, cost: t.cost });
        this.#metrics.leaseLocalHit();
        this.#prefetch(lease, now);
        out[index] = {
          allowed: true,
          remaining: lease.remaining(),
          retryAfterMs: 0,
          resetAfterMs: lease.resetAfterMs(),
        };
        return;
      }
      this.#metrics.leaseLocalMiss();
      if (now < lease.emptyUntilMs) {
        out[index] = {
          allowed: false,
          remaining: lease.tokens,
          retryAfterMs: Math.max(1, Math.ceil(lease.emptyUntilMs - now)),
          resetAfterMs: lease.resetAfterMs(),
        };
        return;
      }
      refills.push(refillLease(lease, t.cost - lease.tokens, this.#o, this.#metrics));
      waiting.push({ index, lease, cost: t.cost });
    });

    if (waiting.length > 0) {
      await Promise.all(refills);
      // A request that joined another request's refill may still be short although the shared
      // bucket had more: ask once more for what is missing (no false deny because a lease was small).
      const short = waiting.filter(
        (w) => w.lease.tokens < w.cost && !w.lease.failed && this.#o.clock.now() >= w.lease.emptyUntilMs,
      );
      const more = (w: (typeof short)[number]) => w.cost - w.lease.tokens;
      if (short.length > 0)
        await Promise.all(short.map((w) => refillLease(w.lease, more(w), this.#o, this.#metrics)));
      for (const w of waiting) {
        const t = takes[w.index] as Take;
        if (w.lease.tokens >= w.cost) {
          w.lease.tokens -= w.cost;
          reserved.push({ lease: w.lease, cost: w.cost });
          out[w.index] = {
            allowed: true,
            remaining: w.lease.remaining(),
            retryAfterMs: 0,
            resetAfterMs: w.lease.resetAfterMs(),
          };
        } else if (w.lease.failed) {
          // The shared store could not lease: let the guard (its failure policy) decide this bucket.
          direct.push(w.index);
        } else {
          out[w.index] = {
            allowed: false,
            remaining: w.lease.remaining(),
            retryAfterMs: w.lease.retryAfterMs(t.cost),
            resetAfterMs: w.lease.resetAfterMs(),
          };
        }
      }
    }

    const leasedDenied = out.some((o) => o !== undefined && !o.allowed);
    if (direct.length > 0) {
      // A denied leased bucket means nothing may be charged: the others are only looked at (forced
      // takes, refunds and overdraft charges, are applied in any case).
      const directTakes = direct.map((i) => {
        const t = takes[i] as Take;
        return leasedDenied && t.cost > 0 && !isForced(t) ? { ...t, cost: 0 } : t;
      });
      let outcomes: Outcome[];
      try {
        outcomes = await this.#o.inner.take(directTakes);
      } catch (err) {
        this.#release(reserved);
        throw err;
      }
      direct.forEach((index, j) => {
        const o = outcomes[j] as Outcome;
        const t = takes[index] as Take;
        out[index] =
          leasedDenied && t.cost > 0 && !isForced(t) ? { ...o, allowed: o.remaining >= t.cost } : o;
      });
    }
    if (out.some((o) => !o?.allowed)) this.#release(reserved);
    return out as Outcome[];
  }

  /**
   * The hot path of a leased key: when live local leases hold the tokens of every take, spend them
   * and answer now, exactly as `take` would (no store call either way). Else undefined, nothing spent.
   */
  takeNow(takes: readonly Take[]): Outcome[] | undefined {
    const now = this.#o.clock.now();
    const out: Outcome[] = new Array(takes.length);
    let i = 0;
    for (; i < takes.length; i++) {
      const t = takes[i] as Take;
      const options = leaseOptions(t, this.#o.defaultLease);
      const lease = options && options.size > 1 && t.cost > 0 ? this.#leases.get(t.key) : undefined;
      if (lease === undefined || lease.expired(now) || lease.tokens < t.cost) break;
      // Spent at once, as in `take`: a second take of the same key sees it.
      lease.tokens -= t.cost;
      out[i] = {
        allowed: true,
        remaining: lease.remaining(),
        retryAfterMs: 0,
        resetAfterMs: lease.resetAfterMs(),
      };
    }
    if (i < takes.length) {
      for (let j = 0; j < i; j++) {
        const t = takes[j] as Take;
        (this.#leases.get(t.key) as Lease).tokens += t.cost;
      }
      return undefined;
    }
    for (let j = 0; j < takes.length; j++) {
      this.#metrics.leaseLocalHit();
      this.#prefetch(this.#leases.get((takes[j] as Take).key) as Lease, now);
    }
    return out;
  }

  refund(takes: readonly Take[]): Promise<void> {
    return this.#o.inner.refund ? this.#o.inner.refund(takes) : Promise.resolve();
  }

  async reset(keys: readonly string[]): Promise<void> {
    for (const k of keys) this.#leases.delete(k);
    await this.#o.inner.reset(keys);
  }

  ready(): Promise<void> {
    return this.#o.inner.ready();
  }

  /** Return every leased token, then close the inner store. */
  async close(): Promise<void> {
    clearInterval(this.#timer);
    await this.#leases.returnAll();
    await this.#o.inner.close();
  }

  /** Return the tokens of expired leases to the shared bucket (also runs on a timer). */
  sweep(): Promise<void> {
    return this.#leases.sweep();
  }

  /** Start topping up a lease that runs low, in the background (see Lease.low). */
  #prefetch(lease: Lease, now: number): void {
    if (lease.refill === undefined && lease.low() && now >= lease.emptyUntilMs)
      void refillLease(lease, 0, this.#o, this.#metrics);
  }

  #release(reserved: readonly { lease: Lease; cost: number }[]): void {
    for (const r of reserved) r.lease.tokens += r.cost;
  }
}
