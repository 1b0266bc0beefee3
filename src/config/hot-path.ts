/**
 * Where compiling meets the hot-path writers: a rule's {@link RulePlan} (shards, per-shard policies,
 * key tails, what its statuses report) with the bytes and strings each writer needs of it, written
 * once here by the writer's own encoder — `Policy.resp` (store/redis/resp-bulk.ts), `ReportedLimit.wire`
 * (protocol/response-wire.ts), `ReportedLimit.headers` (engine/headers.ts) — and frozen. The only
 * module of config/ that imports protocol/ and store/, for those pure encoders only.
 */
import { blockedIndex, CompiledLimit, CompiledPolicy, type RulePlan } from "../engine/compiled.js";
import { limitHeaderItems } from "../engine/headers.js";
import { KeyCache } from "../engine/key-cache.js";
import { keyTail } from "../engine/keys.js";
import { effectiveShards, shardPolicies } from "../engine/shards.js";
import type { Policy, ReportedLimit, RuleLimit } from "../engine/types.js";
import { encodeLimitBody } from "../protocol/response-wire.js";
import { policyArgs } from "../store/redis/resp-bulk.js";

/** `policy` with its take arguments written (a calendar window's are written per call: they move). */
export function compiledPolicy(policy: Policy): CompiledPolicy {
  return new CompiledPolicy(policy, policy.calendar === undefined ? policyArgs(policy) : undefined);
}

/** What a status reports of `limit`, with its response bytes and header items. */
export function compiledLimit(limit: ReportedLimit): CompiledLimit {
  const reported: ReportedLimit = {
    requestsPerUnit: limit.requestsPerUnit,
    unit: limit.unit,
    name: limit.name,
  };
  return new CompiledLimit(reported, encodeLimitBody(reported), limitHeaderItems(reported));
}

/** The plan of a rule with `limits` and the `shards` it asks for. */
export function rulePlanOf(limits: readonly RuleLimit[], shards: number): RulePlan {
  const k = effectiveShards(
    shards,
    limits.map((l) => l.policy),
  );
  const planned = limits.map((l, index) => {
    const policies = Object.freeze(shardPolicies(l.policy, k).map(compiledPolicy));
    const tails = Object.freeze(policies.map((p, s) => keyTail(p.algorithm, index, k > 1 ? s : undefined)));
    return Object.freeze({ reported: compiledLimit(l), policies, tails });
  });
  return Object.freeze({
    shards: k,
    limits: Object.freeze(planned),
    blocked: blockedIndex(planned),
    keys: new KeyCache(),
  });
}
