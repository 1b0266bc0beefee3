/**
 * The validated, typed form of one config file, between the YAML walk (`walk.ts`, `check.ts`)
 * and the compiled rule tree (`compile.ts`). Plain data, no positions beyond the source line.
 */
import type { Algorithm, FailurePolicy, LeaseOptions, Unit } from "../engine/types.js";

/** One limit of a descriptor (`rate_limit` or an item of `rate_limits`). */
export interface LimitSpec {
  readonly name: string | undefined;
  readonly unit: Unit;
  readonly requestsPerUnit: number;
  /** Resolved: explicit `algorithm`, else the load's default algorithm. */
  readonly algorithm: Algorithm;
  /** Explicit `burst`; undefined means `requests_per_unit`. */
  readonly burst: number | undefined;
}

/** One `descriptors` entry. */
export interface DescriptorSpec {
  readonly key: string;
  /** Undefined when absent or empty (a default entry, as in envoyproxy/ratelimit). */
  readonly value: string | undefined;
  readonly line: number;
  /** True when `rate_limit` or `rate_limits` is present. */
  readonly hasRule: boolean;
  readonly limits: readonly LimitSpec[];
  readonly unlimited: boolean;
  readonly replaces: readonly string[];
  readonly shadowMode: boolean;
  /** `calendar: true` with its `time_zone` (default UTC): the unit comes from each limit. */
  readonly calendar: { readonly timeZone: string } | undefined;
  /** `overdraft: true`: positive charges always apply, into debt (see `Policy.maxDebt`). */
  readonly overdraft: boolean;
  /** Explicit `max_debt` in hits; undefined means the default (see compile.ts `maxDebtOf`). */
  readonly maxDebt: number | undefined;
  readonly quotaMode: boolean;
  readonly detailedMetric: boolean;
  readonly valueToMetric: boolean;
  readonly shareThreshold: boolean;
  readonly shards: number;
  readonly lease: LeaseOptions | undefined;
  /** As written on this entry; inheritance is applied by compile. */
  readonly onStoreError: FailurePolicy | undefined;
  readonly metadata: Readonly<Record<string, unknown>> | undefined;
  readonly children: readonly DescriptorSpec[];
}

/** One file's domain. */
export interface DomainSpec {
  readonly domain: string;
  readonly file: string;
  readonly line: number;
  readonly column: number;
  readonly onStoreError: FailurePolicy | undefined;
  readonly descriptors: readonly DescriptorSpec[];
}
