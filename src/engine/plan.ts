/**
 * Step one of a decision: resolve each descriptor of a query into a plan — no limit, unlimited,
 * blocked (requests_per_unit 0), or a list of buckets to charge. Pure; no store access.
 */
import { descriptorTag, keyFromTag } from "./keys.js";
import { matchDescriptor } from "./match.js";
import type {
  DomainRules,
  Entry,
  FailurePolicy,
  LeaseOptions,
  Policy,
  QueryDescriptor,
  ReportedLimit,
  Rule,
} from "./types.js";
import { UNIT_MS } from "./types.js";

/** One bucket of a planned descriptor. */
export interface PlannedLimit {
  readonly reported: ReportedLimit;
  /** Policy of one bucket (for a sharded rule: of one shard). */
  readonly policy: Policy;
  /** Key per shard (length 1 when not sharded). */
  readonly keys: readonly string[];
}

export type Plan =
  | { readonly kind: "none"; readonly rule: Rule | undefined }
  | { readonly kind: "unlimited"; readonly rule: Rule }
  | {
      readonly kind: "limited";
      readonly rule: Rule | undefined;
      readonly limits: readonly PlannedLimit[];
      /** Index into `limits` of a requests_per_unit 0 limit: the descriptor is over without a store call. */
      readonly blocked: number;
      readonly cost: number;
      readonly shadow: boolean;
      readonly quota: boolean;
      readonly onStoreError: FailurePolicy | undefined;
      readonly lease: LeaseOptions | undefined;
      readonly entries: readonly Entry[];
    };

export interface PlanOptions {
  readonly keyPrefix: string;
  readonly defaultAlgorithm: Policy["algorithm"];
}

const sharded = (policy: Policy, shards: number): Policy =>
  shards <= 1
    ? policy
    : {
        algorithm: policy.algorithm,
        limit: Math.max(1, Math.floor(policy.limit / shards)),
        periodMs: policy.periodMs,
        burst: Math.max(1, Math.floor(policy.burst / shards)),
      };

function keysFor(prefix: string, tag: string, policy: Policy, index: number, shards: number): string[] {
  if (shards <= 1) return [keyFromTag(prefix, tag, policy.algorithm, index)];
  return Array.from({ length: shards }, (_, s) => keyFromTag(prefix, tag, policy.algorithm, index, s));
}

/** Plan one descriptor. `replaced` holds limit names some matched rule of this request replaces. */
export function planDescriptor(
  domain: DomainRules,
  d: QueryDescriptor,
  requestHits: number,
  opts: PlanOptions,
  matched: Rule | undefined,
  bucketEntries: readonly Entry[],
  replaced: ReadonlySet<string>,
): Plan {
  const cost = d.hitsAddend ?? (requestHits === 0 ? 1 : requestHits);
  if (d.limit) {
    // A request-supplied override replaces the configured limit when the domain exists; like
    // envoyproxy/ratelimit it is never in shadow mode.
    const periodMs = UNIT_MS[d.limit.unit];
    const policy: Policy = {
      algorithm: opts.defaultAlgorithm,
      limit: d.limit.requestsPerUnit,
      periodMs,
      burst: d.limit.requestsPerUnit,
    };
    const tag = descriptorTag(domain.domain, d.entries);
    return {
      kind: "limited",
      rule: matched,
      limits: [
        {
          reported: { requestsPerUnit: d.limit.requestsPerUnit, unit: d.limit.unit, name: undefined },
          policy,
          keys: [keyFromTag(opts.keyPrefix, tag, policy.algorithm, 0)],
        },
      ],
      blocked: d.limit.requestsPerUnit === 0 ? 0 : -1,
      cost,
      shadow: false,
      quota: false,
      onStoreError: matched?.onStoreError ?? domain.onStoreError,
      lease: undefined,
      entries: d.entries,
    };
  }
  if (!matched) return { kind: "none", rule: undefined };
  if (matched.unlimited) return { kind: "unlimited", rule: matched };
  const live = matched.limits.filter((l) => l.name === undefined || !replaced.has(l.name));
  if (live.length === 0) return { kind: "none", rule: matched };
  const tag = descriptorTag(domain.domain, bucketEntries);
  const limits = live.map((l) => {
    const index = matched.limits.indexOf(l);
    const policy = sharded(l.policy, matched.shards);
    return {
      reported: { requestsPerUnit: l.requestsPerUnit, unit: l.unit, name: l.name },
      policy,
      keys: keysFor(opts.keyPrefix, tag, policy, index, matched.shards),
    };
  });
  return {
    kind: "limited",
    rule: matched,
    limits,
    blocked: limits.findIndex((l) => l.reported.requestsPerUnit === 0),
    cost,
    shadow: matched.shadowMode,
    quota: matched.quotaMode,
    onStoreError: matched.onStoreError ?? domain.onStoreError,
    lease: matched.lease,
    entries: d.entries,
  };
}

/** Match every descriptor, collect `replaces`, then plan each. */
export function planQuery(
  domain: DomainRules,
  descriptors: readonly QueryDescriptor[],
  requestHits: number,
  opts: PlanOptions,
): Plan[] {
  const matches = descriptors.map((d) => matchDescriptor(domain, d.entries));
  const replaced = new Set<string>();
  for (const m of matches) for (const name of m?.rule?.replaces ?? []) replaced.add(name);
  return descriptors.map((d, i) => {
    const m = matches[i];
    return planDescriptor(domain, d, requestHits, opts, m?.rule, m?.bucketEntries ?? d.entries, replaced);
  });
}
