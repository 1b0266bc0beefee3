/**
 * Hot-key sharding (rule option `shards: k`): one logical bucket split into k sub-buckets, each with
 * its own hash tag so that the shards of one hot tenant spread over the cluster's masters.
 *
 * Accuracy bound (what an operator trades for spreading the load):
 * - **Never over-admits.** The shards' rates and capacities are an exact partition of the rule's
 *   (`limit` and `burst` are split with the remainder going to the first shards, so the shares sum to
 *   the totals), and k is capped at the smallest `requests_per_unit` / `burst` of the rule, so every
 *   shard holds at least one token. Over any interval t the key admits at most
 *   `burst + limit · t / period`, exactly as the unsharded bucket would.
 * - **May under-admit.** A request tries one random shard and, on deny, one other; it is denied when
 *   both are short although the k − 2 untried shards may still hold tokens — at most (k − 2)/k of the
 *   capacity can sit unused at the moment of a deny (none for k ≤ 2). A request costing more than the
 *   largest shard's capacity (`ceil(burst / k)`) can never pass, although it would fit the whole bucket.
 * Under load spread evenly over the shards both effects are small; use sharding only for keys hot
 * enough to saturate one Redis master.
 */
import type { Policy } from "./types.js";

/** The number of shards actually used: `shards`, capped so that every shard gets ≥ 1 token of every limit. */
export function effectiveShards(shards: number, policies: readonly Policy[]): number {
  let k = Math.max(1, Math.floor(shards));
  for (const p of policies) k = Math.min(k, Math.floor(p.limit), Math.floor(p.burst));
  return Math.max(1, k);
}

const share = (total: number, k: number, shard: number) =>
  Math.floor(total / k) + (shard < total % k ? 1 : 0);

/** The policies of the k shards of `policy`: rates and capacities that sum to the policy's own. */
export function shardPolicies(policy: Policy, k: number): Policy[] {
  if (k <= 1) return [policy];
  return Array.from({ length: k }, (_, s) =>
    Object.freeze({
      algorithm: policy.algorithm,
      limit: share(policy.limit, k, s),
      periodMs: policy.periodMs,
      burst: share(policy.burst, k, s),
      // Shards of a calendar window end where it ends.
      ...(policy.calendar === undefined ? {} : { calendar: policy.calendar }),
    }),
  );
}

/** A shard other than `current`, uniformly among the k − 1 others (`random` in [0, 1)). */
export function otherShard(current: number, k: number, random: () => number): number {
  return (current + 1 + Math.floor(random() * (k - 1))) % k;
}
