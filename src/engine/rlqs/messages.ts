/**
 * What an RLQS session takes and gives (docs/rlqs.md): decoded usage reports in, bucket actions
 * out, the metrics it reports and the config it reads. Plain values, no protobuf.
 */
import type { Tiers } from "../tiers.js";
import type { FailurePolicy, RuleSet } from "../types.js";
import type { TokenBucketSpec } from "./token-bucket.js";
import type { RlqsRules } from "./types.js";

/** One BucketQuotaUsage, decoded. */
export interface RlqsUsage {
  readonly bucket: ReadonlyMap<string, string>;
  /** `time_elapsed` in ms (Envoy sends whole seconds: 0 for a new bucket's first report). */
  readonly elapsedMs: number;
  readonly allowed: number;
  readonly denied: number;
}

/** One RateLimitQuotaUsageReports, decoded. */
export interface RlqsReport {
  /** Empty when absent. */
  readonly domain: string;
  readonly usages: readonly RlqsUsage[];
}

export type RlqsStrategy =
  | { readonly blanket: "ALLOW_ALL" | "DENY_ALL" }
  | { readonly tokenBucket: TokenBucketSpec };

/** One BucketAction to send. */
export type RlqsAction =
  | {
      readonly kind: "assign";
      readonly bucket: ReadonlyMap<string, string>;
      readonly ttlMs: number;
      readonly strategy: RlqsStrategy;
    }
  | { readonly kind: "abandon"; readonly bucket: ReadonlyMap<string, string> };

/** What made an assignment, for metrics (bounded). */
export type AssignmentKind = "allow_all" | "deny_all" | "token_bucket" | "fallback";

/** Metrics the session reports (TollgateMetrics.rlqs implements them). */
export interface RlqsEvents {
  rlqsUsage(domain: string, buckets: number): void;
  rlqsAssignment(domain: string, kind: AssignmentKind): void;
  rlqsAbandon(domain: string): void;
  rlqsBoardError(domain: string, policy: FailurePolicy): void;
}

/** Invalid input: the stream ends INVALID_ARGUMENT with this message. */
export class RlqsInputError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "RlqsInputError";
  }
}

/** What a session reads on every report (swapped by reference on reload). */
export interface RlqsConfigView {
  readonly rules: RuleSet;
  readonly tiers: Tiers;
  readonly rlqs: RlqsRules;
}

/** Canonical text of a BucketId: sorted pairs (Envoy hashes the map, order-free). */
export function canonical(bucket: ReadonlyMap<string, string>): string {
  return JSON.stringify([...bucket].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0)));
}

/** What identifies a strategy to Envoy: an equal one keeps Envoy's running token bucket. */
export function fingerprint(s: RlqsStrategy): string {
  return "blanket" in s
    ? s.blanket
    : `${s.tokenBucket.maxTokens}/${s.tokenBucket.tokensPerFill}/${s.tokenBucket.fillIntervalSec}`;
}
