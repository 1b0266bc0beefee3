/**
 * tollgate's metrics: implements the engine's narrow {@link EngineMetrics} port with prom-client and
 * adds the typed methods the guard, lease, reload and server parts call. Everything registers on an
 * own `Registry` (never prom-client's global one), served by `GET /metrics` through {@link TollgateMetrics.text}.
 *
 * Hot path: a decision is two Map lookups and an add into a per-rule array, with no object built per
 * call; the counters are brought up to date when scraped (decision-counts.ts). The RLQS metrics are
 * {@link TollgateMetrics.rlqs} (rlqs-metrics.ts).
 */
import { type Counter, collectDefaultMetrics, Registry } from "prom-client";
import type { DecisionResult, EngineMetrics } from "../engine/metrics-port.js";
import { type Clock, type LimitOverride, systemClock } from "../engine/types.js";
import { REDIS_ERROR_CODES } from "../store/redis/errors.js";
import { VERSION } from "../version.js";
import { DecisionCounts } from "./decision-counts.js";
import { defineMetrics, defineWorkerMetrics, type MetricSet, PREFIX } from "./definitions.js";
import { RlqsMetrics } from "./rlqs-metrics.js";
import { OVERFLOW, SeriesCap } from "./series-cap.js";

/** Circuit breaker states, reported as 0, 1 and 2. */
export type BreakerState = "closed" | "half_open" | "open";

/** Outcome of one config load or reload. */
export type ReloadResult = "success" | "failure";

/** Why a request was refused before any decision. */
export type RejectReason = "overload" | "invalid_argument" | "deadline";

const REJECT_REASONS: readonly RejectReason[] = ["overload", "invalid_argument", "deadline"];

/**
 * Store error kinds exported at 0 from the start, so `increase()` / `rate()` see the first error:
 * the Redis codes, and the guard's own (`circuit_open`, `internal` for an unclassified throw).
 */
const STORE_ERROR_KINDS: readonly string[] = [...REDIS_ERROR_CODES, "circuit_open", "internal"];

const BREAKER_VALUE: Readonly<Record<BreakerState, number>> = { closed: 0, half_open: 1, open: 2 };

export interface MetricsOptions {
  /**
   * Series kept per request-influenced metric before values fold into `"_overflow_"`: detailed
   * decisions, limit overrides, and domain/rule pairs of decisions.
   * @default 1000
   */
  readonly maxSeries?: number;
  /** Register Node process metrics (`tollgate_process_*`, `tollgate_nodejs_*`). @default true */
  readonly processMetrics?: boolean;
  /** Time source of the last-successful-reload gauge. @default systemClock */
  readonly clock?: Clock;
  /** Set in a cluster worker: adds its per-worker series (see `defineWorkerMetrics`). */
  readonly worker?: { readonly slot: string; readonly pid: number };
  /** The gRPC transport in use, the `transport` label of `tollgate_build_info`. @default "tollgate" */
  readonly transport?: string;
}

export class TollgateMetrics implements EngineMetrics {
  /** The registry every tollgate metric lives on. */
  readonly registry: Registry;
  /** Content-Type of {@link text}'s output (Prometheus text format). */
  readonly contentType: string;
  /** The RLQS stream and session metrics (rlqs-metrics.ts). */
  readonly rlqs: RlqsMetrics;
  private readonly m: MetricSet;
  private readonly clock: Clock;
  private readonly counts: DecisionCounts;
  private leaseHits = 0;
  private leaseMisses = 0;
  private readonly storeTimers = new Map<string, ReturnType<MetricSet["storeSeconds"]["labels"]>>();
  /** Calls in flight; the gauge reads it at scrape time (no prom-client call per request). */
  private inFlightCount = 0;
  private readonly details: SeriesCap<Counter.Internal>;
  private readonly overrides: SeriesCap<Counter.Internal>;
  /** Requests started so far (a cluster worker's `tollgate_worker_requests_total` reads it). */
  private started = 0;

  constructor(options: MetricsOptions = {}) {
    const maxSeries = options.maxSeries ?? 1000;
    this.registry = new Registry();
    this.contentType = this.registry.contentType;
    this.clock = options.clock ?? systemClock;
    this.m = defineMetrics(this.registry, {
      beforeCollect: () => this.flush(),
      inFlight: () => this.inFlightCount,
    });
    this.m.buildInfo.set(
      { version: VERSION, node_version: process.versions.node, transport: options.transport ?? "tollgate" },
      1,
    );
    if (options.processMetrics ?? true) collectDefaultMetrics({ register: this.registry, prefix: PREFIX });
    if (options.worker) defineWorkerMetrics(this.registry, options.worker, () => this.started);
    this.counts = new DecisionCounts(this.m, maxSeries);
    // Keys are "domain\0rule\0result\0value": NUL cannot occur in config paths or result names.
    this.details = new SeriesCap(maxSeries, (key) => {
      const [domain = OVERFLOW, rule = OVERFLOW, result = OVERFLOW, ...rest] =
        key === OVERFLOW ? [] : key.split("\0");
      const detail = key === OVERFLOW ? OVERFLOW : rest.join("\0");
      return this.m.detailedDecisions.labels({ domain, rule, result, detail });
    });
    // Counters alerts read start at 0: a series born at its first increment hides that increment.
    for (const kind of STORE_ERROR_KINDS) this.m.storeErrors.inc({ kind }, 0);
    for (const reason of REJECT_REASONS) this.m.rejected.inc({ reason }, 0);
    for (const result of ["success", "failure"] as const) this.m.reloads.inc({ result }, 0);
    this.rlqs = new RlqsMetrics(this.m);
    this.overrides = new SeriesCap(maxSeries, (key) => {
      const [domain = OVERFLOW, result = OVERFLOW, override = OVERFLOW] =
        key === OVERFLOW ? [] : key.split("\0");
      return this.m.overrideDecisions.labels({ domain, override, result });
    });
  }

  decision(domain: string, rulePath: string, result: DecisionResult, hits: number, detail?: string): void {
    this.counts.add(domain, rulePath, result, hits);
    if (detail !== undefined) this.details.get(`${domain}\0${rulePath}\0${result}\0${detail}`).inc();
  }

  /** One descriptor that carried a request-supplied limit override (`RateLimitDescriptor.limit`). */
  overrideDecision(domain: string, override: LimitOverride, result: DecisionResult): void {
    this.overrides.get(`${domain}\0${result}\0${override.requestsPerUnit}/${override.unit}`).inc();
  }

  decisionSeconds(seconds: number): void {
    this.m.decisionSeconds.observe(seconds);
  }

  storeSeconds(operation: string, seconds: number): void {
    // Children cached per operation (a handful of names): no label hashing per store call.
    let child = this.storeTimers.get(operation);
    if (child === undefined) {
      child = this.m.storeSeconds.labels({ operation });
      this.storeTimers.set(operation, child);
    }
    child.observe(seconds);
  }

  storeError(kind: string): void {
    this.m.storeErrors.inc({ kind });
  }

  storeRoundTrips(count: number): void {
    this.m.storeRoundTrips.inc(count);
  }

  /** The guard's circuit breaker changed state. */
  breakerState(state: BreakerState): void {
    this.m.breakerState.set(BREAKER_VALUE[state]);
  }

  /** Degraded mode entered (`true`) or left (`false`): decisions follow the failure policy. */
  degraded(active: boolean): void {
    this.m.degraded.set(active ? 1 : 0);
  }

  /** A lease of `tokens` tokens was granted by the shared store. */
  leaseGranted(tokens: number): void {
    this.m.leaseGrants.inc();
    this.m.leaseGrantedTokens.inc(tokens);
  }

  /** A lease was given back with `tokens` unused tokens. */
  leaseReturned(tokens: number): void {
    this.m.leaseReturns.inc();
    this.m.leaseReturnedTokens.inc(tokens);
  }

  /** A take was answered from a local lease without a store round trip (counted, flushed at scrape). */
  leaseLocalHit(): void {
    this.leaseHits++;
  }

  /** A take found no usable local lease and went to the store. */
  leaseLocalMiss(): void {
    this.leaseMisses++;
  }

  /** Live instance count, as seen through the heartbeat (or pinned by a setting). */
  instances(count: number): void {
    this.m.instances.set(count);
  }

  /**
   * A config load or reload finished; success also records the time. The last result stays on
   * `tollgate_config_last_reload_successful` (1 or 0) until the next one.
   */
  reload(result: ReloadResult): void {
    this.m.reloads.inc({ result });
    this.m.reloadOk.set(result === "success" ? 1 : 0);
    if (result === "success") this.m.lastReload.set(this.clock.now() / 1000);
  }

  /**
   * Export `results` of a domain/rule pair at 0 before its first decision (the configured rules, at
   * each load), so `rate()` over them sees the first answers. Takes a series slot like a decision.
   */
  decisionsAtZero(domain: string, rulePath: string, results: readonly DecisionResult[]): void {
    this.counts.atZero(domain, rulePath, results);
  }

  /** A request was refused before any decision. */
  rejected(reason: RejectReason): void {
    this.m.rejected.inc({ reason });
  }

  /** A request entered the decision path; pair with {@link requestFinished}. */
  requestStarted(): void {
    this.started += 1;
    this.inFlightCount++;
  }

  /** A request left the decision path (answered or failed). */
  requestFinished(): void {
    this.inFlightCount--;
  }

  /** Every metric in the Prometheus text format, for `GET /metrics` (serve with {@link contentType}). */
  text(): Promise<string> {
    return this.registry.metrics();
  }

  /** Moves pending decision, hit and lease counts into the prom-client counters (runs on every scrape). */
  private flush(): void {
    if (this.leaseHits > 0) this.m.leaseLocal.inc({ outcome: "hit" }, this.leaseHits);
    if (this.leaseMisses > 0) this.m.leaseLocal.inc({ outcome: "miss" }, this.leaseMisses);
    this.leaseHits = 0;
    this.leaseMisses = 0;
    this.counts.flush();
  }
}
