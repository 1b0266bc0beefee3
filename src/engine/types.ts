/**
 * Domain types shared by config/, engine/, store/ and protocol/.
 * Plain TypeScript values only: nothing here knows about protobuf, Redis or HTTP.
 */

import type { Calendar } from "./calendar.js";
import type { LimitHeaderItems, RulePlan } from "./compiled.js";

/** Time units accepted in config (envoyproxy/ratelimit spelling, any case in YAML). */
export type Unit = "second" | "minute" | "hour" | "day" | "week" | "month" | "year";

/** Length of each unit in milliseconds. Month is 30 days and year 365 days, as in envoyproxy/ratelimit. */
export const UNIT_MS: Readonly<Record<Unit, number>> = Object.freeze({
  second: 1_000,
  minute: 60_000,
  hour: 3_600_000,
  day: 86_400_000,
  week: 7 * 86_400_000,
  month: 30 * 86_400_000,
  year: 365 * 86_400_000,
});

/** Bucket algorithm. `gcra` is a token bucket expressed as a theoretical arrival time. */
export type Algorithm = "gcra" | "fixed_window";

/** What to do when the store fails (resilience issue). */
export type FailurePolicy = "local" | "allow" | "deny" | "error";

/** The math parameters of one bucket. Immutable; built by config/compile or from a request override. */
export interface Policy {
  readonly algorithm: Algorithm;
  /** Requests admitted per `periodMs` (the sustained rate). Always >= 1 here: 0 is handled by the engine. */
  readonly limit: number;
  /** Period of `limit`, in milliseconds. */
  readonly periodMs: number;
  /** Bucket capacity in requests (GCRA). For `fixed_window` this equals `limit`. */
  readonly burst: number;
  /**
   * `fixed_window` only (`calendar: true`): windows follow the calendar of a time zone instead of
   * being epoch-aligned; `periodMs` stays the nominal unit length. See engine/calendar.ts.
   */
  readonly calendar?: Calendar;
  /**
   * Set on an overdraft bucket (rule key `overdraft: true`): a positive charge is always applied, past
   * empty into debt, by at most this many tokens (rule key `max_debt`). Undefined: an ordinary bucket,
   * whose denied charges apply nothing.
   */
  readonly maxDebt?: number;
  /**
   * A compiled policy's RESP bytes of its take arguments (engine/compiled.ts `CompiledPolicy`);
   * undefined on a policy made per request or a calendar window (written per call).
   */
  readonly resp?: string | undefined;
}

/** One limit of a rule (a rule may carry several: all must pass). */
export interface RuleLimit {
  /** `rate_limit.name`, reported as `current_limit.name` and used by `replaces`. */
  readonly name: string | undefined;
  readonly unit: Unit;
  /** `requests_per_unit`; 0 blocks every request. */
  readonly requestsPerUnit: number;
  readonly policy: Policy;
}

/** Where a config node came from, for error messages and /rlconfig. */
export interface SourceRef {
  readonly file: string;
  readonly line: number;
}

/** Two-tier leasing options of a rule (lease issue). */
export interface LeaseOptions {
  readonly size: number;
  readonly ttlMs: number;
}

/** A compiled rule: the limit(s) attached to one node of a domain's descriptor tree. */
export interface Rule {
  readonly domain: string;
  /**
   * Metric-safe config path, e.g. `edge.tenant.route_class_read`: domain, then per level `key` or
   * `key_value`. Never contains runtime values of value-less (default) entries.
   */
  readonly path: string;
  /** Empty when `unlimited` or when this node only whitelists a value. */
  readonly limits: readonly RuleLimit[];
  readonly unlimited: boolean;
  readonly shadowMode: boolean;
  readonly quotaMode: boolean;
  readonly detailedMetric: boolean;
  readonly valueToMetric: boolean;
  /** Names of limits this rule replaces (envoyproxy `replaces`). */
  readonly replaces: readonly string[];
  /** Hot-key sharding: number of sub-buckets (1 = off). */
  readonly shards: number;
  readonly lease: LeaseOptions | undefined;
  readonly onStoreError: FailurePolicy | undefined;
  readonly source: SourceRef;
  /** What the planner charges, computed at compile time (engine/compiled.ts). */
  readonly plan: RulePlan;
}

/** One node of a compiled descriptor tree. */
export interface DescriptorNode {
  readonly key: string;
  /** Undefined for a value-less (default) entry. */
  readonly value: string | undefined;
  /** Set when `value` contains `*`: compiled glob matcher. */
  readonly glob: RegExp | undefined;
  /** With a glob: `share_threshold` makes every matching value share one bucket. */
  readonly shareThreshold: boolean;
  /** The rule attached here; undefined when the node has no `rate_limit` (pure intermediate/whitelist). */
  readonly rule: Rule | undefined;
  /** True when the node has a value but neither rate_limit nor children (whitelist). */
  readonly whitelist: boolean;
  readonly children: DescriptorLevel;
}

/** One level of the tree: exact `key_value` lookups, then globs in YAML order, then `key` defaults. */
/** The nodes of one level that share an entry key, as the match walk looks them up. */
export interface KeyNodes {
  /** Nodes with a literal value, by value. */
  readonly exact: ReadonlyMap<string, DescriptorNode>;
  /** Nodes whose value is a glob, in YAML order (the first that matches wins). */
  readonly globs: readonly DescriptorNode[];
  /** The value-less (default) node of the key. */
  readonly fallback: DescriptorNode | undefined;
}

/** One level of a domain's descriptor tree. Built once by config/compile, frozen. */
export interface DescriptorLevel {
  /** The one lookup index: per entry key, its nodes (a request builds no strings to match). */
  readonly byKey: ReadonlyMap<string, KeyNodes>;
  /** Every node in match order (exact values, then globs, then defaults), for listings. */
  readonly nodes: readonly DescriptorNode[];
}

export interface DomainRules {
  readonly domain: string;
  readonly root: DescriptorLevel;
  readonly onStoreError: FailurePolicy | undefined;
  readonly source: SourceRef;
}

/** The whole loaded configuration: immutable, frozen, swapped by reference on reload. */
export interface RuleSet {
  readonly domains: ReadonlyMap<string, DomainRules>;
  /** Files this set was loaded from. */
  readonly files: readonly string[];
}

/** A descriptor entry as received from Envoy. */
export interface Entry {
  readonly key: string;
  readonly value: string;
}

/** A request-supplied limit override (RateLimitDescriptor.limit). */
export interface LimitOverride {
  readonly requestsPerUnit: number;
  readonly unit: Unit;
}

/** One descriptor of a request, decoded from protobuf by protocol/. */
export interface QueryDescriptor {
  readonly entries: readonly Entry[];
  readonly limit: LimitOverride | undefined;
  /** Per-descriptor hits_addend when present (0 = check without consuming); undefined when absent. */
  readonly hitsAddend: number | undefined;
  /**
   * `is_negative_hits`: the hits (per-descriptor, else the request's) are given back to the buckets
   * instead of charged (a refund). @default false
   */
  readonly negativeHits?: boolean;
}

/** A decoded ShouldRateLimit request. */
export interface RateLimitQuery {
  readonly domain: string;
  readonly descriptors: readonly QueryDescriptor[];
  /** Request-level hits_addend; 0 means 1. */
  readonly hitsAddend: number;
}

export type Code = "OK" | "OVER_LIMIT";

/** Reported limit of a descriptor status (RateLimitResponse.RateLimit). */
export interface ReportedLimit {
  readonly requestsPerUnit: number;
  readonly unit: Unit;
  readonly name: string | undefined;
  /**
   * A configured limit's `RateLimit` message body, one char per byte (engine/compiled.ts
   * `CompiledLimit`); undefined on a request-supplied override (written per response).
   */
  readonly wire?: string | undefined;
  /** A configured limit's header items; undefined on a request-supplied override. */
  readonly headers?: LimitHeaderItems | undefined;
}

/** Per-descriptor answer (RateLimitResponse.DescriptorStatus). */
export interface DescriptorStatus {
  readonly code: Code;
  readonly currentLimit: ReportedLimit | undefined;
  readonly limitRemaining: number;
  /** Whole seconds (Envoy drops nanos); undefined when not applicable. */
  readonly durationUntilResetSec: number | undefined;
}

export interface Header {
  readonly key: string;
  readonly value: string;
}

/** A decided ShouldRateLimit answer, encoded to protobuf by protocol/. */
export interface RateLimitAnswer {
  readonly overallCode: Code;
  readonly statuses: readonly DescriptorStatus[];
  readonly responseHeaders: readonly Header[];
}

/** Injected time source. Tests use a fake clock and never sleep. */
export interface Clock {
  /** Milliseconds since the epoch (may be fractional). */
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

/** An opaque handle returned by {@link Timers.set}. */
export type TimerHandle = unknown;

/**
 * Injected one-shot timers, for deadlines: the store guard's (one per store call) and the gRPC call's
 * (`grpc-timeout`, which Envoy sends on every rate limit call); also the tenant overrides' resync
 * (store/tenants/redis-overrides.ts), re-armed after each run. A deadline is a timer, not a clock
 * read, so tests pass the fake clock (test/helpers/fake-clock.ts), which is also a {@link Timers},
 * and never sleep.
 */
export interface Timers {
  /** Call `fn` once after `ms` milliseconds. The timer must not keep the process alive. */
  set(fn: () => void, ms: number): TimerHandle;
  /** Cancel a timer; cancelling a fired or cancelled one is a no-op. */
  clear(handle: TimerHandle): void;
}

/**
 * Node's timers, unref'ed so a pending deadline never holds the process open at shutdown. (A queue
 * per duration in front of them was tried and removed: docs/decisions/timers.md.)
 */
export const systemTimers: Timers = {
  set(fn, ms) {
    const t = setTimeout(fn, ms);
    t.unref();
    return t;
  },
  clear(handle) {
    clearTimeout(handle as NodeJS.Timeout);
  },
};
