/**
 * Domain types of the Rate Limit Quota Service (RLQS, docs/rlqs.md): a domain's `rlqs` section as
 * compiled by config/sections/rlqs.ts, and what a bucket resolves to. Plain values, no protobuf.
 */

/** One key of a BucketId, in the order it becomes a descriptor entry. */
export interface RlqsKey {
  readonly key: string;
  /** A BucketId without this key is refused (INVALID_ARGUMENT). */
  readonly required: boolean;
}

/** The compiled `rlqs` section of one domain. */
export interface RlqsDomain {
  readonly domain: string;
  /** BucketId keys in descriptor order; a BucketId may carry no other key. */
  readonly keys: readonly RlqsKey[];
  /** `assignment_time_to_live` sent with every assignment, ms (whole seconds: Envoy reads seconds). */
  readonly ttlMs: number;
  /** The `reporting_interval` the Envoys are configured with, ms (first-report demand, idle timing). */
  readonly reportingIntervalMs: number;
  /** A bucket without a report for this many reporting intervals is abandoned. */
  readonly idleIntervals: number;
  /** Floor of an Envoy's share, as a fraction of an equal split (0..1). */
  readonly minShare: number;
  /** Re-send an unchanged-direction increase only when the rate grows by this fraction (0..1). */
  readonly reassignThreshold: number;
  readonly source: { readonly file: string; readonly line: number };
}

/** Domain → its RLQS settings; a domain without an `rlqs` section serves no RLQS stream. */
export type RlqsRules = ReadonlyMap<string, RlqsDomain>;

/** No `rlqs` section anywhere. */
export const NO_RLQS: RlqsRules = new Map();
