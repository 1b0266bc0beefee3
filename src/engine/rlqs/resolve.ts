/**
 * A BucketId → what the domain's rules say about it, through the same rule tree (and `tiers`
 * section) as RLS and ext_authz: the BucketId's pairs become one descriptor, in the key order the
 * domain's `rlqs.keys` declares, matched with envoyproxy/ratelimit semantics (engine/match.ts).
 *
 * - no rule, a whitelisted value, `unlimited`, or `shadow_mode` → ALLOW_ALL (RLS would answer OK);
 * - a limit of 0 requests → DENY_ALL (RLS would answer OVER_LIMIT to every request);
 * - otherwise a shared limit: the most restrictive of the rule's limits by sustained rate, with
 *   the smallest burst of them; the allocator splits it across the Envoys reporting the bucket.
 */
import { matchDescriptor } from "../match.js";
import { matchTier, type Tiers } from "../tiers.js";
import type { DomainRules, Entry, Rule } from "../types.js";
import type { RlqsDomain } from "./types.js";

/** A limit shared by every Envoy reporting one bucket. */
export interface SharedLimit {
  /** Sustained rate in requests per second. */
  readonly ratePerSec: number;
  /** Bucket capacity in requests. */
  readonly burst: number;
}

/** What a bucket resolves to. */
export type Resolution =
  | {
      readonly kind: "allow_all";
      readonly why: "no_rule" | "whitelist" | "unlimited" | "shadow";
      readonly rule: Rule | undefined;
    }
  | { readonly kind: "deny_all"; readonly rule: Rule }
  | {
      readonly kind: "limited";
      readonly rule: Rule;
      readonly limit: SharedLimit;
      /** Entries naming the shared bucket (a `share_threshold` glob level carries its pattern). */
      readonly bucketEntries: readonly Entry[];
    };

/** Thrown for a BucketId the domain's `rlqs.keys` do not allow; the message is the reason. */
export class BucketIdError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "BucketIdError";
  }
}

/** The descriptor entries of a BucketId, in the declared key order. Throws BucketIdError. */
export function bucketEntries(settings: RlqsDomain, bucket: ReadonlyMap<string, string>): Entry[] {
  if (bucket.size === 0) throw new BucketIdError("bucket_id has no pairs");
  for (const [key, value] of bucket) {
    if (key === "") throw new BucketIdError("bucket_id has an empty key");
    if (value === "") throw new BucketIdError(`bucket_id key ${JSON.stringify(key)} has an empty value`);
    if (!settings.keys.some((k) => k.key === key))
      throw new BucketIdError(
        `bucket_id key ${JSON.stringify(key)} is not one of domain ${JSON.stringify(settings.domain)}'s rlqs keys (${settings.keys.map((k) => k.key).join(", ")})`,
      );
  }
  const entries: Entry[] = [];
  for (const { key, required } of settings.keys) {
    const value = bucket.get(key);
    if (value !== undefined) entries.push({ key, value });
    else if (required) throw new BucketIdError(`bucket_id lacks the required key ${JSON.stringify(key)}`);
  }
  return entries;
}

/** The shared limit of a rule with limits: the lowest sustained rate, the smallest burst. */
export function sharedLimit(rule: Rule): SharedLimit | undefined {
  let ratePerSec = Number.POSITIVE_INFINITY;
  let burst = Number.POSITIVE_INFINITY;
  for (const l of rule.limits) {
    if (l.requestsPerUnit === 0) return undefined;
    ratePerSec = Math.min(ratePerSec, (l.policy.limit * 1000) / l.policy.periodMs);
    burst = Math.min(burst, l.policy.burst);
  }
  return Number.isFinite(ratePerSec) ? { ratePerSec, burst } : undefined;
}

/** Resolve a BucketId's entries against a domain's rules (tree first, then its tiers section). */
export function resolveBucket(
  domain: DomainRules | undefined,
  tiers: Tiers,
  entries: readonly Entry[],
): Resolution {
  const m = domain === undefined ? undefined : matchDescriptor(domain, entries);
  const t = m === undefined && domain !== undefined ? matchTier(tiers, domain.domain, entries) : undefined;
  const rule = m?.rule ?? t?.rule;
  if (rule === undefined) return { kind: "allow_all", why: m === undefined ? "no_rule" : "whitelist", rule };
  if (rule.unlimited || rule.limits.length === 0) return { kind: "allow_all", why: "unlimited", rule };
  if (rule.shadowMode) return { kind: "allow_all", why: "shadow", rule };
  const limit = sharedLimit(rule);
  if (limit === undefined) return { kind: "deny_all", rule };
  return { kind: "limited", rule, limit, bucketEntries: m?.bucketEntries ?? t?.bucketEntries ?? entries };
}
