/**
 * A planned request between its plan and its answer (decide.ts): its takes, grouped by descriptor,
 * how their outcomes are read back, and whether they deny the request.
 */
import type { Outcome, Take } from "../store/store.js";
import type { LimitedPlan, Plan } from "./plan.js";
import type { Entry, RateLimitQuery } from "./types.js";

/** The buckets of one limited descriptor inside the request's take list. */
export interface Group {
  readonly descriptor: number;
  readonly plan: LimitedPlan;
  /** Index of the descriptor's first take; its limits follow in order. */
  readonly start: number;
  shard: number;
}

/** A request between its plan and its answer. */
export interface Pending {
  readonly q: RateLimitQuery;
  readonly plans: readonly Plan[];
  readonly blockedOver: readonly boolean[];
  readonly peekOnly: boolean;
  readonly groups: Group[];
  readonly takes: Take[];
}

export const NO_OUTCOMES: readonly Outcome[] = Object.freeze([]);

export function anyDenied(outcomes: readonly Outcome[], g: Group): boolean {
  for (let li = 0; li < g.plan.limits.length; li++)
    if (outcomes[g.start + li]?.allowed === false) return true;
  return false;
}

/**
 * The take of one limit and shard of a plan. `peek`: the request is denied anyway, so only look
 * (a refund or an overdraft charge is applied in any case: it keeps its cost).
 */
export function takeOf(plan: LimitedPlan, limit: number, shard: number, peek: boolean): Take {
  const l = plan.limits[limit];
  if (!l) throw new RangeError(`limit ${limit} is not planned`);
  const policy = l.policies[shard] ?? (l.policies[0] as Take["policy"]);
  const cost = plan.cost;
  // One literal shape for every take (object spread is slow on the hot path, see plan.ts).
  return {
    key: plan.keys?.[limit]?.[shard] ?? plan.keyBase + (l.tails[shard] ?? ""),
    policy,
    cost: peek && cost > 0 && policy.maxDebt === undefined ? 0 : cost,
    onStoreError: plan.onStoreError,
    lease: plan.lease,
  };
}

/** The `detailed_metric` value of a descriptor: its runtime `key_value` pairs (metrics/ caps them). */
export function detailOf(entries: readonly Entry[]): string {
  return entries.map((e) => `${e.key}_${e.value}`).join(".");
}

/** OVER_LIMIT when an enforced non-quota descriptor is over, or every quota_mode descriptor is. */
export function denies(plans: readonly Plan[], over: readonly boolean[]): boolean {
  let quotas = 0;
  let quotasOver = 0;
  for (let i = 0; i < plans.length; i++) {
    const p = plans[i] as Plan;
    if (p.kind !== "limited" || p.shadow) continue;
    if (p.quota) {
      quotas++;
      if (over[i]) quotasOver++;
    } else if (over[i]) return true;
  }
  return quotas > 0 && quotasOver === quotas;
}
