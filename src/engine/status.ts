/**
 * Step three of a decision: turn one descriptor's plan and its buckets' outcomes into the
 * DescriptorStatus Envoy receives, the header view of it and the metric result.
 */
import type { AnsweringPolicy, Outcome } from "../store/store.js";
import type { HeaderStatus } from "./headers.js";
import type { DecisionResult } from "./metrics-port.js";
import type { LimitedPlan, Plan } from "./plan.js";
import type { DescriptorStatus, ReportedLimit } from "./types.js";

/** `limit_remaining` of an unlimited descriptor: the largest uint32. */
export const UNLIMITED_REMAINING = 4_294_967_295;

const NO_LIMIT: DescriptorStatus = Object.freeze({
  code: "OK",
  currentLimit: undefined,
  limitRemaining: 0,
  durationUntilResetSec: undefined,
});
const UNLIMITED: DescriptorStatus = Object.freeze({ ...NO_LIMIT, limitRemaining: UNLIMITED_REMAINING });

/** The status of a descriptor of an unknown domain, or one no rule limits. */
export const noLimitStatus = NO_LIMIT;

/** One descriptor's decision before the overall code is known. */
export interface Described {
  readonly status: DescriptorStatus;
  /** The descriptor's view for the header writer; undefined when no limit matched. */
  readonly header: Omit<HeaderStatus, "enforcedOver"> | undefined;
  readonly result: DecisionResult;
}

// Envoy drops nanos: report whole seconds, rounded up so a client that waits that long passes.
const ceilSec = (ms: number) => Math.max(0, Math.ceil(ms / 1000));
const waitMs = (o: Outcome) => (o.retryAfterMs < 0 ? Number.POSITIVE_INFINITY : o.retryAfterMs);

/**
 * The binding limit of a descriptor among its outcomes (index-aligned with `plan.limits`): the
 * denied one with the longest wait, else the one with the fewest tokens left.
 */
export function bindingLimit(outcomes: readonly Outcome[]): number {
  let best = 0;
  for (let i = 1; i < outcomes.length; i++) {
    const o = outcomes[i] as Outcome;
    const b = outcomes[best] as Outcome;
    if (o.allowed !== b.allowed) {
      if (!o.allowed) best = i;
    } else if (!o.allowed ? waitMs(o) > waitMs(b) : o.remaining < b.remaining) best = i;
  }
  return best;
}

/** Describe one descriptor. `outcomes` are its buckets' outcomes, index-aligned with its limits. */
export function describe(plan: Plan, outcomes: readonly Outcome[]): Described {
  if (plan.kind === "none")
    return { status: NO_LIMIT, header: undefined, result: plan.rule ? "ok" : "no_match" };
  if (plan.kind === "unlimited") return { status: UNLIMITED, header: undefined, result: "unlimited" };
  if (plan.blocked >= 0) return blocked(plan);
  const at = bindingLimit(outcomes);
  const o = outcomes[at] as Outcome;
  const reported = plan.limits[at]?.reported as ReportedLimit;
  const over = !o.allowed;
  // OK: time until the bucket is full again; OVER_LIMIT: until this cost would be admitted (at least
  // 1 s); a cost above the capacity never passes and gets no retry time.
  const resetSec = over
    ? o.retryAfterMs < 0
      ? undefined
      : Math.max(1, ceilSec(o.retryAfterMs))
    : ceilSec(o.resetAfterMs);
  const remaining = over ? 0 : o.remaining;
  const status: DescriptorStatus = {
    code: over && !plan.shadow ? "OVER_LIMIT" : "OK",
    currentLimit: reported,
    limitRemaining: remaining,
    durationUntilResetSec: resetSec,
  };
  return {
    status,
    header: { limit: reported, remaining, resetSec, over },
    result: o.policy === undefined ? resultOf(plan, over) : POLICY_RESULT[o.policy],
  };
}

/** The metric result of an answer the failure policy gave instead of the store. */
const POLICY_RESULT: Readonly<Record<AnsweringPolicy, DecisionResult>> = {
  allow: "policy_allow",
  deny: "policy_deny",
  local: "fallback",
};

/** A requests_per_unit 0 limit: over without a store call, and no time at which it would pass. */
function blocked(plan: LimitedPlan): Described {
  const reported = plan.limits[plan.blocked]?.reported as ReportedLimit;
  const status: DescriptorStatus = {
    code: plan.shadow ? "OK" : "OVER_LIMIT",
    currentLimit: reported,
    limitRemaining: 0,
    durationUntilResetSec: undefined,
  };
  return {
    status,
    header: { limit: reported, remaining: 0, resetSec: undefined, over: true },
    result: resultOf(plan, true),
  };
}

const resultOf = (plan: LimitedPlan, over: boolean): DecisionResult =>
  over ? (plan.shadow ? "shadow_over_limit" : "over_limit") : "ok";
