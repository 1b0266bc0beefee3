/**
 * The decision engine: plan each descriptor, charge every bucket of the request in one
 * all-or-nothing store call, then combine — overall code, shadow, quota mode, unlimited, the binding
 * status and the headers. Pure apart from the injected Store, Clock and metrics. The takes of a
 * request are built and read in request-takes.ts, a shard retry or an admitted charge after the
 * first answer in second-takes.ts.
 */
import type { Outcome, Store, Take } from "../store/store.js";
import { type HeaderFormat, type HeaderStatus, rateLimitHeaders } from "./headers.js";
import type { DecisionObserver, DecisionResult, EngineMetrics } from "./metrics-port.js";
import { type FallbackMatch, type Plan, Planner, planKeys } from "./plan.js";
import {
  anyDenied,
  denies,
  detailOf,
  type Group,
  NO_OUTCOMES,
  type Pending,
  takeOf,
} from "./request-takes.js";
import { chargeAdmitted, retryShards, shardRetryCanHelp } from "./second-takes.js";
import { describe, noLimitStatus } from "./status.js";
import type {
  Algorithm,
  Clock,
  DescriptorStatus,
  RateLimitAnswer,
  RateLimitQuery,
  RuleSet,
} from "./types.js";

/** Options of an {@link Engine}. */
export interface EngineOptions {
  /** The current rules; read once per request, so a reload swaps them between requests. */
  readonly rules: () => RuleSet;
  readonly store: Store;
  /** Epoch time for `X-RateLimit-Reset`; bucket math uses the store's clock. */
  readonly clock: Clock;
  readonly metrics: EngineMetrics;
  /** Prefix of every bucket key (setting `--key-prefix`). @default "" */
  readonly keyPrefix?: string;
  /** Response header format (setting `TOLLGATE_RESPONSE_HEADERS`). @default "legacy" */
  readonly headers?: HeaderFormat;
  /** Random 0..N whole seconds added to Retry-After. @default 0 */
  readonly retryAfterJitterSec?: number;
  /** Statuses are reported as decided, but the overall code is always OK. @default false */
  readonly globalShadowMode?: boolean;
  /** Algorithm of request-supplied limit overrides. @default "gcra" */
  readonly defaultAlgorithm?: Algorithm;
  /** Uniform [0, 1) source for shard choice and jitter. @default Math.random */
  readonly random?: () => number;
  /** Tried when the descriptor tree matches nothing: the tier lookup (engine/tiers.ts). */
  readonly fallback?: FallbackMatch;
  /** Decision log hooks (per-decision debug line, unknown domain and no-match warnings). @default none */
  readonly observer?: DecisionObserver;
}

/** Decides ShouldRateLimit queries against the current rules and a Store. */
export class Engine {
  private readonly planner: Planner;
  private readonly format: HeaderFormat;
  private readonly jitterSec: number;
  private readonly globalShadow: boolean;
  private readonly random: () => number;

  constructor(private readonly deps: EngineOptions) {
    this.planner = new Planner({
      keyPrefix: deps.keyPrefix ?? "",
      defaultAlgorithm: deps.defaultAlgorithm ?? "gcra",
      fallback: deps.fallback,
    });
    this.format = deps.headers ?? "legacy";
    this.jitterSec = deps.retryAfterJitterSec ?? 0;
    this.globalShadow = deps.globalShadowMode ?? false;
    this.random = deps.random ?? Math.random;
  }

  /**
   * Decide one request. Never answers UNKNOWN (Envoy reads it as OK). Fails with the store's
   * StoreError when the store fails and no guard decorates it.
   *
   * Synchronous when the store answers synchronously (`Store.takeNow`: the in-process store, local
   * lease tokens): no promise, no microtask hop, so the transport can answer in the same turn. Else a
   * promise of the answer.
   */
  shouldRateLimit(q: RateLimitQuery): RateLimitAnswer | Promise<RateLimitAnswer> {
    const started = performance.now();
    let answer: RateLimitAnswer | Promise<RateLimitAnswer>;
    try {
      answer = this.decide(q);
    } catch (err) {
      this.timed(started);
      throw err;
    }
    if (!(answer instanceof Promise)) {
      this.timed(started);
      return answer;
    }
    // Failed decisions (store errors) are timed too: they are what a latency alert is for.
    return answer.then(
      (a) => {
        this.timed(started);
        return a;
      },
      (err: unknown) => {
        this.timed(started);
        throw err;
      },
    );
  }

  private timed(started: number): void {
    this.deps.metrics.decisionSeconds((performance.now() - started) / 1000);
  }

  /**
   * The bucket keys this query would charge (every limit and shard of every matched descriptor),
   * e.g. for `POST /v1/reset`. Charges and reads nothing.
   */
  bucketKeys(q: RateLimitQuery): string[] {
    const domain = this.deps.rules().domains.get(q.domain);
    if (!domain) return [];
    return this.planner.plan(domain, q.descriptors, q.hitsAddend).flatMap(planKeys);
  }

  private decide(q: RateLimitQuery): RateLimitAnswer | Promise<RateLimitAnswer> {
    const { metrics } = this.deps;
    const domain = this.deps.rules().domains.get(q.domain);
    if (!domain) {
      for (const _ of q.descriptors) metrics.decision(q.domain, "", "no_match", 0);
      const answer: RateLimitAnswer = {
        overallCode: "OK",
        statuses: q.descriptors.map(() => noLimitStatus),
        responseHeaders: [],
      };
      const observer = this.deps.observer;
      if (observer !== undefined) {
        observer.unknownDomain?.(q);
        observer.decided?.(
          q,
          answer,
          q.descriptors.map(() => "no_match"),
        );
      }
      return answer;
    }
    const plans = this.planner.plan(domain, q.descriptors, q.hitsAddend);
    // A blocked (requests_per_unit 0) descriptor may deny the request before any bucket is read;
    // then the other buckets are only peeked, so the denied request consumes nothing.
    const blockedOver = plans.map((p) => p.kind === "limited" && p.blocked >= 0);
    const peekOnly = denies(plans, blockedOver) && !this.globalShadow;
    const groups: Group[] = [];
    const takes = this.buildTakes(plans, groups, peekOnly);
    const d: Pending = { q, plans, blockedOver, peekOnly, groups, takes };
    if (takes.length === 0) return this.charged(d, []);
    const now = this.deps.store.takeNow?.(takes);
    if (now !== undefined) return this.charged(d, now);
    return this.deps.store.take(takes).then((outcomes) => this.charged(d, outcomes));
  }

  /** The first store answer is in: a hot-key shard retry may still need the store. */
  private charged(d: Pending, outcomes: Outcome[]): RateLimitAnswer | Promise<RateLimitAnswer> {
    if (!d.peekOnly && shardRetryCanHelp(d, outcomes, this.globalShadow))
      return retryShards(this.deps.store, this.random, d, outcomes).then((o) => this.decided(d, o));
    return this.decided(d, outcomes);
  }

  /** The overall code; buckets admitted past a refusal (shadow, quota) are charged now. */
  private decided(d: Pending, outcomes: Outcome[]): RateLimitAnswer | Promise<RateLimitAnswer> {
    const over = d.blockedOver.slice();
    for (const g of d.groups) over[g.descriptor] = anyDenied(outcomes, g);
    const denied = denies(d.plans, over);
    const overallCode = denied && !this.globalShadow ? "OVER_LIMIT" : "OK";
    if (overallCode === "OK" && outcomes.some((o) => !o.allowed)) {
      // Admitted although some bucket refused (shadow or quota mode, global shadow): the
      // all-or-nothing call charged nothing, so charge the buckets that can pass now.
      return chargeAdmitted(this.deps.store, d.takes, outcomes).then((o) => this.answer(d, overallCode, o));
    }
    return this.answer(d, overallCode, outcomes);
  }

  /** Statuses, metrics and headers of a decided request. */
  private answer(
    d: Pending,
    overallCode: "OK" | "OVER_LIMIT",
    outcomes: readonly Outcome[],
  ): RateLimitAnswer {
    const { q, plans, groups } = d;
    const { metrics, observer } = this.deps;
    const statuses: DescriptorStatus[] = new Array(plans.length);
    // Built only when a decision log asks for it (debug level): nothing per decision otherwise.
    const results: DecisionResult[] | undefined = observer?.decided ? new Array(plans.length) : undefined;
    const headerStatuses: HeaderStatus[] = [];
    // Groups are in descriptor order: walk them alongside the plans (no per-request map).
    let next = 0;
    for (let i = 0; i < plans.length; i++) {
      const plan = plans[i] as Plan;
      const g = groups[next]?.descriptor === i ? groups[next++] : undefined;
      const mine = g ? outcomes.slice(g.start, g.start + g.plan.limits.length) : NO_OUTCOMES;
      const { status, header, result } = describe(plan, mine);
      statuses[i] = status;
      if (header) {
        const enforced = plan.kind === "limited" && !plan.shadow && overallCode === "OVER_LIMIT";
        headerStatuses.push({
          limit: header.limit,
          remaining: header.remaining,
          resetSec: header.resetSec,
          over: header.over,
          enforcedOver: header.over && enforced,
        });
      }
      const detail = plan.rule?.detailedMetric ? detailOf(q.descriptors[i]?.entries ?? []) : undefined;
      metrics.decision(
        q.domain,
        plan.rule?.path ?? "",
        result,
        plan.kind === "limited" ? plan.cost : 0,
        detail,
      );
      const override = q.descriptors[i]?.limit;
      if (override && metrics.overrideDecision) metrics.overrideDecision(q.domain, override, result);
      if (results !== undefined) results[i] = result;
      if (result === "no_match") observer?.noMatch?.(q.domain, q.descriptors[i]?.entries ?? []);
    }
    const responseHeaders = rateLimitHeaders(headerStatuses, {
      format: this.format,
      nowMs: this.deps.clock.now(),
      jitterSec: this.jitterSec,
      random: this.random,
    });
    const answer: RateLimitAnswer = { overallCode, statuses, responseHeaders };
    if (results !== undefined) observer?.decided?.(q, answer, results);
    return answer;
  }

  /** One take per bucket, grouped by descriptor; a sharded descriptor starts on a random shard. */
  private buildTakes(plans: readonly Plan[], groups: Group[], peekOnly: boolean): Take[] {
    const takes: Take[] = [];
    plans.forEach((plan, descriptor) => {
      if (plan.kind !== "limited" || plan.blocked >= 0) return;
      const shard = plan.shards > 1 ? Math.floor(this.random() * plan.shards) : 0;
      groups.push({ descriptor, plan, start: takes.length, shard });
      for (let li = 0; li < plan.limits.length; li++) takes.push(takeOf(plan, li, shard, peekOnly));
    });
    return takes;
  }
}
