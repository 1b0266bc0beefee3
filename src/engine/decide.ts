/**
 * The decision engine: plan each descriptor, charge every enforced bucket of the request in one
 * all-or-nothing store call, then combine — overall code, shadow, quota mode, unlimited, the binding
 * status and the headers. Pure apart from the injected Store, Clock and metrics.
 */
import type { Outcome, Store, Take } from "../store/store.js";
import { type HeaderFormat, type HeaderStatus, rateLimitHeaders } from "./headers.js";
import type { DecisionResult, EngineMetrics } from "./metrics-port.js";
import { type Plan, planQuery } from "./plan.js";
import type {
  Algorithm,
  Clock,
  DescriptorStatus,
  RateLimitAnswer,
  RateLimitQuery,
  RuleSet,
} from "./types.js";

export interface EngineOptions {
  /** The current rules; read once per request, so a reload swaps them between requests. */
  readonly rules: () => RuleSet;
  readonly store: Store;
  readonly clock: Clock;
  readonly metrics: EngineMetrics;
  /** @default "" */
  readonly keyPrefix?: string;
  /** @default "legacy" */
  readonly headers?: HeaderFormat;
  /** Random 0..N seconds added to Retry-After. @default 0 */
  readonly retryAfterJitterSec?: number;
  /** Statuses are reported but the overall code is always OK. @default false */
  readonly globalShadowMode?: boolean;
  /** Algorithm of request-supplied limit overrides. @default "gcra" */
  readonly defaultAlgorithm?: Algorithm;
  /** @default Math.random */
  readonly random?: () => number;
}

const UNLIMITED_REMAINING = 4_294_967_295;
const NO_LIMIT: DescriptorStatus = Object.freeze({
  code: "OK",
  currentLimit: undefined,
  limitRemaining: 0,
  durationUntilResetSec: undefined,
});
const UNLIMITED: DescriptorStatus = Object.freeze({ ...NO_LIMIT, limitRemaining: UNLIMITED_REMAINING });

/** Where in the take list each bucket of a limited descriptor sits. */
interface Slot {
  readonly descriptor: number;
  readonly limit: number;
  shard: number;
}

const ceilSec = (ms: number) => Math.max(0, Math.ceil(ms / 1000));

export class Engine {
  private readonly opts: Required<Omit<EngineOptions, "rules" | "store" | "clock" | "metrics">>;

  constructor(private readonly deps: EngineOptions) {
    this.opts = {
      keyPrefix: deps.keyPrefix ?? "",
      headers: deps.headers ?? "legacy",
      retryAfterJitterSec: deps.retryAfterJitterSec ?? 0,
      globalShadowMode: deps.globalShadowMode ?? false,
      defaultAlgorithm: deps.defaultAlgorithm ?? "gcra",
      random: deps.random ?? Math.random,
    };
  }

  /** Decide one ShouldRateLimit request. Throws StoreError when the store fails and nothing guards it. */
  async shouldRateLimit(q: RateLimitQuery): Promise<RateLimitAnswer> {
    const started = performance.now();
    const { metrics } = this.deps;
    const domain = this.deps.rules().domains.get(q.domain);
    if (!domain) {
      for (const _ of q.descriptors) metrics.decision(q.domain, "", "no_match", 0);
      metrics.decisionSeconds((performance.now() - started) / 1000);
      return { overallCode: "OK", statuses: q.descriptors.map(() => NO_LIMIT), responseHeaders: [] };
    }
    const plans = planQuery(domain, q.descriptors, q.hitsAddend, this.opts);
    const { takes, slots } = this.buildTakes(plans);
    let outcomes = takes.length > 0 ? await this.deps.store.take(takes) : [];
    outcomes = await this.retryShards(plans, takes, slots, outcomes);

    const over = plans.map(
      (p, i) => p.kind === "limited" && (p.blocked >= 0 || isDenied(slots, outcomes, i)),
    );
    const enforcedOver = plans.some((p, i) => over[i] && p.kind === "limited" && !p.shadow && !p.quota);
    const quotaPlans = plans.filter((p) => p.kind === "limited" && p.quota);
    const quotaAllOver =
      quotaPlans.length > 0 && plans.every((p, i) => !(p.kind === "limited" && p.quota) || over[i]);
    const denied = enforcedOver || quotaAllOver;
    if (!denied && outcomes.some((o) => !o.allowed)) {
      // The request is admitted although some bucket refused (shadow or quota mode): the all-or-nothing
      // call charged nothing, so charge the buckets that can pass now.
      outcomes = await this.chargeAdmitted(takes, outcomes);
    }

    const statuses: DescriptorStatus[] = [];
    const headerStatuses: HeaderStatus[] = [];
    plans.forEach((plan, i) => {
      const { status, header, result } = this.describe(plan, i, slots, outcomes, over[i] === true);
      statuses.push(status);
      if (header)
        headerStatuses.push({
          ...header,
          enforcedOver: header.over && plan.kind === "limited" && !plan.shadow && denied,
        });
      const rulePath = plan.rule?.path ?? "";
      const hits = plan.kind === "limited" ? plan.cost : 0;
      const detail = plan.rule?.detailedMetric ? detailOf(q.descriptors[i]?.entries ?? []) : undefined;
      metrics.decision(q.domain, rulePath, result, hits, detail);
      const override = q.descriptors[i]?.limit;
      if (override && metrics.overrideDecision) metrics.overrideDecision(q.domain, override, result);
    });
    const overallCode = denied && !this.opts.globalShadowMode ? "OVER_LIMIT" : "OK";
    const responseHeaders = rateLimitHeaders(
      overallCode === "OK" ? headerStatuses.map((h) => ({ ...h, enforcedOver: false })) : headerStatuses,
      {
        format: this.opts.headers,
        nowMs: this.deps.clock.now(),
        jitterSec: this.opts.retryAfterJitterSec,
        random: this.opts.random,
      },
    );
    metrics.decisionSeconds((performance.now() - started) / 1000);
    return { overallCode, statuses, responseHeaders };
  }

  private buildTakes(plans: readonly Plan[]): { takes: Take[]; slots: Slot[] } {
    const takes: Take[] = [];
    const slots: Slot[] = [];
    plans.forEach((plan, descriptor) => {
      if (plan.kind !== "limited" || plan.blocked >= 0) return;
      plan.limits.forEach((limit, li) => {
        const shard = limit.keys.length > 1 ? Math.floor(this.opts.random() * limit.keys.length) : 0;
        slots.push({ descriptor, limit: li, shard });
        takes.push(makeTake(plan, li, shard));
      });
    });
    return { takes, slots };
  }

  /**
   * Sharded hot keys: a denied shard is retried once on another shard before the request is denied.
   * Each shard holds 1/k of rate and burst, so a key admits at most its limit in total; it may deny
   * while up to (k-2)/k of the capacity sits in shards it did not try.
   */
  private async retryShards(
    plans: readonly Plan[],
    takes: Take[],
    slots: Slot[],
    outcomes: Outcome[],
  ): Promise<Outcome[]> {
    let retried = false;
    slots.forEach((slot, i) => {
      const plan = plans[slot.descriptor];
      if (plan?.kind !== "limited" || outcomes[i]?.allowed !== false) return;
      const shards = plan.limits[slot.limit]?.keys.length ?? 1;
      if (shards < 2) return;
      slot.shard = (slot.shard + 1 + Math.floor(this.opts.random() * (shards - 1))) % shards;
      takes[i] = makeTake(plan, slot.limit, slot.shard);
      retried = true;
    });
    return retried ? this.deps.store.take(takes) : outcomes;
  }

  private async chargeAdmitted(takes: readonly Take[], outcomes: Outcome[]): Promise<Outcome[]> {
    const index: number[] = [];
    const again: Take[] = [];
    outcomes.forEach((o, i) => {
      const t = takes[i];
      if (o.allowed && t && t.cost > 0) {
        index.push(i);
        again.push(t);
      }
    });
    if (again.length === 0) return outcomes;
    const charged = await this.deps.store.take(again);
    const merged = outcomes.slice();
    index.forEach((at, j) => {
      const o = charged[j];
      if (o) merged[at] = o;
    });
    return merged;
  }

  private describe(
    plan: Plan,
    i: number,
    slots: readonly Slot[],
    outcomes: readonly Outcome[],
    over: boolean,
  ): {
    status: DescriptorStatus;
    header: Omit<HeaderStatus, "enforcedOver"> | undefined;
    result: DecisionResult;
  } {
    if (plan.kind === "none")
      return { status: NO_LIMIT, header: undefined, result: plan.rule ? "ok" : "no_match" };
    if (plan.kind === "unlimited") return { status: UNLIMITED, header: undefined, result: "unlimited" };
    const result: DecisionResult = over ? (plan.shadow ? "shadow_over_limit" : "over_limit") : "ok";
    if (plan.blocked >= 0) {
      const reported = plan.limits[plan.blocked]?.reported;
      const status: DescriptorStatus = {
        code: plan.shadow ? "OK" : "OVER_LIMIT",
        currentLimit: reported,
        limitRemaining: 0,
        durationUntilResetSec: undefined,
      };
      return {
        status,
        header: reported && { limit: reported, remaining: 0, resetSec: undefined, over: true },
        result,
      };
    }
    // Binding limit: the denied one with the longest wait, else the one with the fewest tokens left.
    let best = -1;
    let bestOutcome: Outcome | undefined;
    slots.forEach((slot, at) => {
      if (slot.descriptor !== i) return;
      const o = outcomes[at] as Outcome;
      if (!bestOutcome) {
        best = slot.limit;
        bestOutcome = o;
      } else if (!o.allowed && (bestOutcome.allowed || waitMs(o) > waitMs(bestOutcome))) {
        best = slot.limit;
        bestOutcome = o;
      } else if (o.allowed && bestOutcome.allowed && o.remaining < bestOutcome.remaining) {
        best = slot.limit;
        bestOutcome = o;
      }
    });
    const reported = plan.limits[best]?.reported;
    const o = bestOutcome as Outcome;
    const denied = !o.allowed;
    const resetSec = denied
      ? o.retryAfterMs < 0
        ? undefined
        : Math.max(1, ceilSec(o.retryAfterMs))
      : ceilSec(o.resetAfterMs);
    const remaining = denied ? 0 : o.remaining;
    const status: DescriptorStatus = {
      code: denied && !plan.shadow ? "OVER_LIMIT" : "OK",
      currentLimit: reported,
      limitRemaining: remaining,
      durationUntilResetSec: resetSec,
    };
    return { status, header: reported && { limit: reported, remaining, resetSec, over: denied }, result };
  }
}

const waitMs = (o: Outcome) => (o.retryAfterMs < 0 ? Number.POSITIVE_INFINITY : o.retryAfterMs);

function isDenied(slots: readonly Slot[], outcomes: readonly Outcome[], descriptor: number): boolean {
  for (let i = 0; i < slots.length; i++)
    if (slots[i]?.descriptor === descriptor && outcomes[i]?.allowed === false) return true;
  return false;
}

function makeTake(plan: Extract<Plan, { kind: "limited" }>, limit: number, shard: number): Take {
  const l = plan.limits[limit];
  if (!l) throw new Error(`no limit ${limit}`);
  const take: Take = { key: l.keys[shard] ?? (l.keys[0] as string), policy: l.policy, cost: plan.cost };
  return plan.onStoreError ? { ...take, onStoreError: plan.onStoreError } : take;
}

/** The `detailed_metric` value of a descriptor: its runtime `key_value` pairs (metrics/ caps them). */
function detailOf(entries: readonly { key: string; value: string }[]): string {
  return entries.map((e) => `${e.key}_${e.value}`).join(".");
}
