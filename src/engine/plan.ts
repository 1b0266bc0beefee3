/**
 * Step one of a decision: resolve each descriptor of a query into a plan — no limit, unlimited, or
 * a list of buckets to charge (possibly blocked by a requests_per_unit 0 limit). Pure; no store access.
 * Everything that depends on config alone (reported limits, shard policies, key tails) comes with the
 * rule, computed when it was compiled (`Rule.plan`, engine/compiled.ts); a request only builds the
 * entries part of its keys, and only once per entry values (the plan's key cache).
 */
import { blockedIndex, type PlannedLimit, type RulePlan } from "./compiled.js";
import type { KeySet } from "./key-cache.js";
import { entriesPart, keyHead, overrideTail } from "./keys.js";
import { matchDescriptor } from "./match.js";
import { policyOf } from "./policy.js";
import type {
  DomainRules,
  Entry,
  FailurePolicy,
  LeaseOptions,
  Policy,
  QueryDescriptor,
  Rule,
} from "./types.js";

export type { PlannedLimit } from "./compiled.js";

/** A descriptor with buckets to charge. */
export interface LimitedPlan {
  readonly kind: "limited";
  readonly rule: Rule | undefined;
  readonly limits: readonly PlannedLimit[];
  /** Key prefix shared by every bucket of this descriptor: head and entries, tag still open. */
  readonly keyBase: string;
  /**
   * The whole keys, `keys[limit][shard]` = keyBase + tail, when cached for these entry values (see
   * KeyCache); undefined when `limits` is not the rule's own list (an override, a `replaces`).
   */
  readonly keys: readonly (readonly string[])[] | undefined;
  /** Shards of every limit (1 = not sharded). */
  readonly shards: number;
  /** Index into `limits` of a requests_per_unit 0 limit (the descriptor is over without a store call), else -1. */
  readonly blocked: number;
  /** Hits to charge; 0 checks only; negative gives them back (`is_negative_hits`). */
  readonly cost: number;
  readonly shadow: boolean;
  readonly quota: boolean;
  readonly onStoreError: FailurePolicy | undefined;
  readonly lease: LeaseOptions | undefined;
  readonly entries: readonly Entry[];
}

export type Plan =
  | { readonly kind: "none"; readonly rule: Rule | undefined }
  | { readonly kind: "unlimited"; readonly rule: Rule }
  | LimitedPlan;

/** Options of a {@link Planner}. */
export interface PlanOptions {
  /** Deployment prefix of every key. */
  readonly keyPrefix: string;
  /** Algorithm of request-supplied limit overrides. */
  readonly defaultAlgorithm: Policy["algorithm"];
  /** Consulted when the descriptor tree matches nothing (tier lookup, engine/tiers.ts). */
  readonly fallback?: FallbackMatch | undefined;
}

/** A second matcher tried after the descriptor tree: the rule and the entries naming its bucket. */
export type FallbackMatch = (
  domain: string,
  entries: readonly Entry[],
) => { readonly rule: Rule; readonly bucketEntries: readonly Entry[] } | undefined;

/** The limits not named by another matched rule's `replaces`. */
function withoutReplaced(limits: readonly PlannedLimit[], replaced: ReadonlySet<string>): PlannedLimit[] {
  return limits.filter((l) => l.reported.name === undefined || !replaced.has(l.reported.name));
}

/** Plans queries for one engine. */
export class Planner {
  /** Key head per domain name (`keyHead` of this engine's prefix): a string per configured domain. */
  private readonly heads = new Map<string, string>();

  constructor(private readonly opts: PlanOptions) {}

  /** Match every descriptor, collect `replaces`, then plan each. */
  plan(domain: DomainRules, descriptors: readonly QueryDescriptor[], requestHits: number): Plan[] {
    const fallback = this.opts.fallback;
    const matches = descriptors.map(
      (d) => matchDescriptor(domain, d.entries) ?? fallback?.(domain.domain, d.entries),
    );
    const replaced = new Set<string>();
    for (const m of matches) for (const name of m?.rule?.replaces ?? []) replaced.add(name);
    return descriptors.map((d, i) => {
      const m = matches[i];
      return this.planOne(domain, d, requestHits, m?.rule, m?.bucketEntries ?? d.entries, replaced);
    });
  }

  private planOne(
    domain: DomainRules,
    d: QueryDescriptor,
    requestHits: number,
    matched: Rule | undefined,
    bucketEntries: readonly Entry[],
    replaced: ReadonlySet<string>,
  ): Plan {
    // Protocol gap: request-level hits_addend 0 means 1; a present per-descriptor value overrides it,
    // and a present 0 checks the buckets without consuming. `is_negative_hits` gives them back.
    const hits = d.hitsAddend ?? (requestHits === 0 ? 1 : requestHits);
    const cost = d.negativeHits === true && hits > 0 ? -hits : hits;
    const onStoreError = matched?.onStoreError ?? domain.onStoreError;
    // Plans are written out as literals of one shape: object spread per request is costly and mixed
    // shapes make later reads polymorphic (docs/decisions/compiled-config.md, "Per request").
    if (d.limit) {
      // A request-supplied override replaces the configured limit whenever the domain exists (matched
      // or not); as in envoyproxy/ratelimit it is never in shadow mode, never sharded.
      const rpu = d.limit.requestsPerUnit;
      const policy = policyOf({
        algorithm: this.opts.defaultAlgorithm,
        requestsPerUnit: rpu,
        unit: d.limit.unit,
      });
      const limit: PlannedLimit = {
        reported: { requestsPerUnit: rpu, unit: d.limit.unit, name: undefined },
        policies: [policy],
        // Its own bucket, named by the override (engine/keys.ts).
        tails: [overrideTail(policy.algorithm, d.limit)],
      };
      return {
        kind: "limited",
        rule: matched,
        limits: [limit],
        keyBase: this.head(domain) + entriesPart(d.entries),
        keys: undefined,
        shards: 1,
        blocked: rpu === 0 ? 0 : -1,
        cost,
        shadow: false,
        quota: false,
        onStoreError,
        lease: undefined,
        entries: d.entries,
      };
    }
    if (!matched) return { kind: "none", rule: undefined };
    if (matched.unlimited) return { kind: "unlimited", rule: matched };
    const compiled = matched.plan;
    const limits = replaced.size === 0 ? compiled.limits : withoutReplaced(compiled.limits, replaced);
    if (limits.length === 0) return { kind: "none", rule: matched };
    const cached = this.keySet(domain, compiled, bucketEntries);
    return {
      kind: "limited",
      rule: matched,
      limits,
      keyBase: cached.keyBase,
      keys: limits === compiled.limits ? cached.keys : undefined,
      shards: compiled.shards,
      blocked: compiled.limits === limits ? compiled.blocked : blockedIndex(limits),
      cost,
      shadow: matched.shadowMode,
      quota: matched.quotaMode,
      onStoreError,
      lease: matched.lease,
      entries: d.entries,
    };
  }

  /** The rule's keys for these entries, from its cache or built (and cached) now. */
  private keySet(domain: DomainRules, compiled: RulePlan, entries: readonly Entry[]): KeySet {
    const head = this.head(domain);
    const hit = compiled.keys.get(head, entries);
    if (hit !== undefined) return hit;
    const keyBase = head + entriesPart(entries);
    const keys = compiled.limits.map((l) => l.tails.map((tail) => keyBase + tail));
    const set: KeySet = { head, entries: entries.slice(), keyBase, keys };
    if (entries.length > 0) compiled.keys.add(set);
    return set;
  }

  private head(domain: DomainRules): string {
    let h = this.heads.get(domain.domain);
    if (h === undefined) {
      h = keyHead(this.opts.keyPrefix, domain.domain);
      this.heads.set(domain.domain, h);
    }
    return h;
  }
}

/** Every bucket key a plan can charge: each limit, each shard. Empty for none/unlimited plans. */
export function planKeys(plan: Plan): string[] {
  if (plan.kind !== "limited") return [];
  const keys: string[] = [];
  plan.limits.forEach((limit, i) => {
    const cached = plan.keys?.[i];
    limit.tails.forEach((tail, shard) => {
      keys.push(cached?.[shard] ?? plan.keyBase + tail);
    });
  });
  return keys;
}
