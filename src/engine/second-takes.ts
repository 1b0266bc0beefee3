/**
 * The store calls of a request after its first answer (decide.ts): a sharded hot key denied on its
 * shard is tried once more on another, and the buckets admitted past a refusal (shadow, quota mode,
 * global shadow) are charged, because the all-or-nothing first call charged nothing.
 */
import { isForced, type Outcome, type Store, type Take } from "../store/store.js";
import { anyDenied, denies, type Pending, takeOf } from "./request-takes.js";
import { otherShard } from "./shards.js";

/** False when an unsharded enforced denial decides the request anyway: no second round trip. */
export function shardRetryCanHelp(
  d: Pick<Pending, "plans" | "groups" | "blockedOver">,
  outcomes: readonly Outcome[],
  globalShadow: boolean,
): boolean {
  const { plans, groups, blockedOver } = d;
  // Only a sharded descriptor can move to another shard; most requests have none.
  if (!groups.some((g) => g.plan.shards > 1)) return false;
  if (globalShadow) return true;
  const fixedOver = blockedOver.slice();
  for (const g of groups) if (g.plan.shards < 2) fixedOver[g.descriptor] = anyDenied(outcomes, g);
  return !denies(plans, fixedOver);
}

/**
 * Sharded hot keys: a descriptor denied on its shard is moved, all its limits together (one hash
 * tag), to one other shard, and the whole request is tried once more (bound in engine/shards.ts).
 * Updates the request's groups and takes in place.
 */
export async function retryShards(
  store: Store,
  random: () => number,
  d: Pick<Pending, "groups" | "takes">,
  outcomes: Outcome[],
): Promise<Outcome[]> {
  const { groups, takes } = d;
  let retried = false;
  const moved = new Set<number>();
  for (const g of groups) {
    if (g.plan.shards < 2 || !anyDenied(outcomes, g)) continue;
    g.shard = otherShard(g.shard, g.plan.shards, random);
    for (let li = 0; li < g.plan.limits.length; li++) {
      takes[g.start + li] = takeOf(g.plan, li, g.shard, false);
      moved.add(g.start + li);
    }
    retried = true;
  }
  if (!retried) return outcomes;
  // The first call applied its forced takes (refunds, overdraft charges) already: the retry only
  // looks at their buckets, and their first outcomes stand.
  const forced: number[] = [];
  const retry = takes.map((t, i) => {
    if (moved.has(i) || !isForced(t)) return t;
    forced.push(i);
    return { key: t.key, policy: t.policy, cost: 0, onStoreError: t.onStoreError, lease: t.lease };
  });
  const again = await store.take(retry);
  for (const i of forced) again[i] = outcomes[i] as Outcome;
  return again;
}

/** Charge the takes whose buckets allowed them (outcomes merged over the first call's). */
export async function chargeAdmitted(
  store: Store,
  takes: readonly Take[],
  outcomes: Outcome[],
): Promise<Outcome[]> {
  const at: number[] = [];
  outcomes.forEach((o, i) => {
    // Forced takes (refunds, overdraft charges) were applied by the first call already.
    const t = takes[i];
    if (o.allowed && t !== undefined && t.cost > 0 && !isForced(t)) at.push(i);
  });
  if (at.length === 0) return outcomes;
  const charged = await store.take(at.map((i) => takes[i] as Take));
  const merged = outcomes.slice();
  at.forEach((i, j) => {
    const o = charged[j];
    if (o) merged[i] = o;
  });
  return merged;
}
