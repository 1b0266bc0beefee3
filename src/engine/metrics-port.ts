/**
 * The narrow metrics interface the engine and stores report through. metrics/ implements it with
 * prom-client; tests and the library use `noopMetrics`. Labels here are always bounded: rule paths
 * come from config, never from request values (metrics/ caps `detailed_metric` values itself).
 */
import type { LimitOverride } from "./types.js";

/** Result of one descriptor decision. */
export type DecisionResult = "ok" | "over_limit" | "shadow_over_limit" | "unlimited" | "no_match";

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

export const noopMetrics: EngineMetrics = {
  decision() {},
  decisionSeconds() {},
  storeSeconds() {},
  storeError() {},
  storeRoundTrips() {},
};
