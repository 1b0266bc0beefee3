/**
 * The leases one instance holds, one per bucket key (leased-store.ts serves takes from them): a
 * lease is made on first use and replaced once expired; the tokens of an expired lease go back to
 * the shared bucket (the sweep, a replaced lease), and so do all of them on close.
 */
import type { Clock, LeaseOptions } from "../../engine/types.js";
import type { Take } from "../store.js";
import type { LeaseBackend } from "./backend.js";
import { Lease } from "./lease.js";
import type { LeaseMetrics } from "./leased-store.js";

export class LeaseTable {
  readonly #leases = new Map<string, Lease>();
  #returning: Promise<void>[] = [];

  constructor(
    private readonly o: { readonly backend: LeaseBackend; readonly clock: Clock },
    private readonly metrics: Pick<LeaseMetrics, "leaseReturned">,
  ) {}

  /** Leases held, by key. */
  get all(): ReadonlyMap<string, Lease> {
    return this.#leases;
  }

  get(key: string): Lease | undefined {
    return this.#leases.get(key);
  }

  /** Forget a key's lease (its tokens are not returned: the bucket is being reset). */
  delete(key: string): void {
    this.#leases.delete(key);
  }

  /** The live lease of `t`'s key; an expired one (no refill in flight) is returned and replaced. */
  lease(t: Take, options: LeaseOptions, now: number): Lease {
    let lease = this.#leases.get(t.key);
    if (lease?.expired(now) && lease.refill === undefined) {
      void this.#return([lease]);
      lease = undefined;
    }
    if (!lease) {
      lease = new Lease(t.key, t.policy, options);
      this.#leases.set(t.key, lease);
    }
    return lease;
  }

  /** Return the tokens of expired leases to the shared bucket. */
  sweep(): Promise<void> {
    const now = this.o.clock.now();
    const expired: Lease[] = [];
    for (const lease of this.#leases.values()) {
      if (lease.expired(now) && lease.refill === undefined) {
        expired.push(lease);
        this.#leases.delete(lease.key);
      }
    }
    return this.#return(expired);
  }

  /** Return every leased token and wait for the returns still in flight. */
  async returnAll(): Promise<void> {
    const all = [...this.#leases.values()];
    this.#leases.clear();
    await this.#return(all);
    await Promise.allSettled(this.#returning);
  }

  #return(leases: readonly Lease[]): Promise<void> {
    const now = this.o.clock.now();
    const takes = leases
      .filter((l) => l.tokens > 0 && l.returnable(now))
      .map((l) => ({ key: l.key, policy: l.policy, cost: l.tokens }));
    if (takes.length === 0) {
      for (const l of leases) l.tokens = 0;
      return Promise.resolve();
    }
    const tokens = takes.reduce((n, t) => n + t.cost, 0);
    for (const l of leases) l.tokens = 0;
    const p = this.o.backend.refund(takes).then(
      () => this.metrics.leaseReturned(tokens),
      () => {}, // the shared store is away: the tokens come back when the bucket refills (TTL)
    );
    this.#returning.push(p);
    void p.finally(() => {
      this.#returning = this.#returning.filter((x) => x !== p);
    });
    return p;
  }
}
