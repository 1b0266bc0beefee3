/**
 * The narrow metrics interface the engine and stores report through. metrics/ implements it with
 * prom-client; tests and the library use `noopMetrics`. Labels here are always bounded: rule paths
 * come from config, never from request values (metrics/ caps `detailed_metric` values itself).
 */
import type { Entry, LimitOverride, RateLimitAnswer, RateLimitQuery } from "./types.js";

/**
 * Result of one descriptor decision. `ok` / `over_limit` are the store's answers; while the store
 * fails, the failure policy's answers are `policy_allow` / `policy_deny` and the in-process
 * fallback's (`local`) are `fallback`, so an outage never reads as tenants going over their limits.
 */
export type DecisionResult =
  | "ok"
  | "over_limit"
  | "shadow_over_limit"
  | "unlimited"
  | "no_match"
  | "policy_allow"
  | "policy_deny"
  | "fallback";

export interface EngineMetrics {
  /** One descriptor decided. `rulePath` is the config path or `""` for no match; `detail` is the
   *  descriptor's runtime `key_value` string when the rule has `detailed_metric` (capped by metrics/). */
  decision(domain: string, rulePath: string, result: DecisionResult, hits: number, detail?: string): void;
  /** Wall time of one whole ShouldRateLimit/Check decision, in seconds. */
  decisionSeconds(seconds: number): void;
  /** Wall time of one store operation (`take`, `reset`, `lease`, `refund`…), in seconds. */
  storeSeconds(operation: string, seconds: number): void;
  /** A store error, by classified kind (`timeout`, `connection`, `script`, `circuit_open`, …). */
  storeError(kind: string): void;
  /** Redis round trips made (for round-trips-per-request figures). */
  storeRoundTrips(count: number): void;
  /** Optional: a descriptor carried a request-supplied limit override (metrics/ caps the values). */
  overrideDecision?(domain: string, override: LimitOverride, result: DecisionResult): void;
}

/**
 * What the engine tells a decision log (src/decision-log.ts). Every hook is optional; the engine
 * checks for a hook before building anything for it, so an absent one costs nothing per decision.
 */
export interface DecisionObserver {
  /** A request was decided: `results[i]` is descriptor i's metric result. */
  decided?(q: RateLimitQuery, answer: RateLimitAnswer, results: readonly DecisionResult[]): void;
  /** A request named a domain the config does not have (answered OK, nothing limited). */
  unknownDomain?(q: RateLimitQuery): void;
  /** A descriptor of a configured domain matched no rule (answered OK for it, nothing limited). */
  noMatch?(domain: string, entries: readonly Entry[]): void;
}

export const noopMetrics: EngineMetrics = {
  decision() {},
  decisionSeconds() {},
  storeSeconds() {},
  storeError() {},
  storeRoundTrips() {},
};
