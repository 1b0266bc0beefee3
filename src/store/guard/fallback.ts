/**
 * The `local` policy: decide from an in-process store whose limits are the rule's limits divided by
 * the number of live instances, so the fleet as a whole admits about what the shared store would.
 */
import type { Policy } from "../../engine/types.js";
import type { Outcome, Store, Take } from "../store.js";

/** The live instance count the fallback divides by (the heartbeat registry implements it). */
export interface InstanceCount {
  /** Live instances, at least 1. */
  count(): number;
}

/** A policy with `limit`, `burst` (and an overdraft's `maxDebt`) divided by `instances`, each at least 1. */
export function dividePolicy(policy: Policy, instances: number): Policy {
  const n = Math.max(1, Math.floor(instances));
  if (n === 1) return policy;
  const divided: Policy = {
    ...policy,
    limit: Math.max(1, Math.floor(policy.limit / n)),
    burst: Math.max(1, Math.floor(policy.burst / n)),
  };
  if (policy.maxDebt === undefined) return Object.freeze(divided);
  return Object.freeze({ ...divided, maxDebt: Math.max(1, Math.floor(policy.maxDebt / n)) });
}

/** Options of {@link LocalFallback}. */
export interface LocalFallbackOptions {
  /** The in-process store (normally a `MemoryStore`). */
  readonly store: Store;
  readonly instances: InstanceCount;
}

/** Answers takes from the in-process store with divided limits. */
export class LocalFallback {
  readonly store: Store;
  readonly #instances: InstanceCount;
  /** Divided policies per instance count, so a steady outage builds no object per take. */
  #cache = new WeakMap<Policy, { n: number; divided: Policy }>();

  constructor(opts: LocalFallbackOptions) {
    this.store = opts.store;
    this.#instances = opts.instances;
  }

  /** The fallback store's answers, each marked `policy: "local"` (metrics count them as `fallback`). */
  async take(takes: readonly Take[]): Promise<Outcome[]> {
    const n = Math.max(1, Math.floor(this.#instances.count()));
    const outcomes = await this.store.take(
      takes.map((t) => ({ key: t.key, cost: t.cost, policy: this.#divided(t.policy, n) })),
    );
    return outcomes.map((o) => ({ ...o, policy: "local" }));
  }

  #divided(policy: Policy, n: number): Policy {
    const hit = this.#cache.get(policy);
    if (hit !== undefined && hit.n === n) return hit.divided;
    const divided = dividePolicy(policy, n);
    this.#cache.set(policy, { n, divided });
    return divided;
  }
}
