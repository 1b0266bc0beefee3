/**
 * The one storage port. It speaks domain types only (see docs/architecture.md, "Seams").
 */
import type { FailurePolicy, LeaseOptions, Policy } from "../engine/types.js";

/**
 * Charge `cost` tokens from the bucket `key` governed by `policy`. Cost 0 peeks; a negative cost gives
 * `-cost` tokens back (a refund: never above a full bucket, always allowed).
 */
export interface Take {
  readonly key: string;
  readonly policy: Policy;
  readonly cost: number;
  /**
   * What the guard does for this bucket when the store fails: the rule's `on_store_error`, else the
   * domain's. Undefined means the guard's default (`local`). Backends ignore it.
   */
  readonly onStoreError?: FailurePolicy;
  /**
   * Two-tier limiting for this bucket (the rule's `lease`): the lease layer serves it from tokens
   * leased in batches. Backends ignore it.
   */
  readonly lease?: LeaseOptions;
}

/**
 * Whether a take is applied whatever the rest of its call decides: a refund (cost < 0), or a positive
 * charge on an overdraft bucket (`policy.maxDebt` set). A call applies its forced takes first, in
 * order, then the others, all-or-nothing (see Outcome).
 */
export function isForced(take: Take): boolean {
  return take.cost < 0 || (take.cost > 0 && take.policy.maxDebt !== undefined);
}

/**
 * The answer for one Take.
 *
 * A `take` call is all-or-nothing for its ordinary takes: when any Take is not allowed, none of them
 * is charged, and their Outcomes describe the bucket as it is (uncharged). Forced takes
 * ({@link isForced}) are applied in any case, and their Outcomes describe the bucket after them.
 *
 * An overdraft bucket allows a take (a check with cost 0 included) while it holds at least one whole
 * token before the charge; denied, `retryAfterMs` counts until it holds one again.
 */
export interface Outcome {
  /** Whether this bucket alone could admit its cost now. */
  readonly allowed: boolean;
  /** Whole tokens left after this call (after the charge when charged, else as it is). */
  readonly remaining: number;
  /** When not allowed: ms until the cost would be admitted; -1 when it never can (cost > burst). 0 when allowed. */
  readonly retryAfterMs: number;
  /** Ms until the bucket is full again (GCRA) or the window ends (fixed window). */
  readonly resetAfterMs: number;
  /**
   * Set when the guard's failure policy answered instead of the store: `allow` and `deny` are the
   * policies' fixed answers, `local` the in-process fallback's. Absent on store answers. Metrics
   * report these as `policy_allow`, `policy_deny` and `fallback`, never as `ok` / `over_limit`.
   */
  readonly policy?: AnsweringPolicy;
}

/** The failure policies that answer takes themselves (`error` answers none: it fails them). */
export type AnsweringPolicy = "allow" | "deny" | "local";

/** Classified storage failure: the guard turns these into a policy decision. */
export class StoreError extends Error {
  readonly code: string;
  readonly transient: boolean;
  /** Counted in `tollgate_store_errors_total` already (see {@link reportOnce}). */
  reported = false;
  constructor(message: string, options: { code: string; transient: boolean; cause?: unknown }) {
    super(message, { cause: options.cause });
    this.name = "StoreError";
    this.code = options.code;
    this.transient = options.transient;
  }
}

/**
 * Count `err` once in the store error metric, whoever sees it first: the Redis store counts what it
 * classifies (lease grants and refunds reach no guard), the guard what it alone sees (its deadline,
 * an open breaker, unclassified throws), and a take failure passing through both counts once.
 */
export function reportOnce(err: StoreError, sink: { storeError(kind: string): void }): void {
  if (err.reported) return;
  err.reported = true;
  sink.storeError(err.code);
}

export interface Store {
  /** `memory`, `redis`, `redis-cluster`, or a decorator name. */
  readonly kind: string;
  /** Evaluate every Take atomically where the backend can (see Outcome). */
  take(takes: readonly Take[]): Promise<Outcome[]>;
  /**
   * Optional: the outcomes of `take(takes)` now, synchronously, when the store can answer without
   * I/O (the in-process store always; the lease store when local tokens cover every take). Undefined
   * when it cannot, with nothing changed: then call `take`. Lets a decision finish in the turn its
   * request arrived, with no promise in between.
   */
  takeNow?(takes: readonly Take[]): Outcome[] | undefined;
  /**
   * Optional: give `cost` tokens back to each bucket (cross-slot compensation, lease returns). An
   * absent bucket is already full and stays absent; a fixed-window counter never goes below 0.
   */
  refund?(takes: readonly Take[]): Promise<void>;
  /** Delete the buckets so they are full again. */
  reset(keys: readonly string[]): Promise<void>;
  /** Resolves once the store can serve (e.g. Redis connected and PINGed). */
  ready(): Promise<void>;
  /**
   * Optional: call `listener` every time the store, or one node of it, is connected and ready again
   * after a loss (and on the first connect). `node` is `""` for the whole store, else a node name as
   * the store's routing names it (a Redis Cluster master's `host:port`). The guard uses it to probe a
   * returning store at once instead of at the end of its breaker's open time.
   */
  onReady?(listener: (node: string) => void): void;
  close(): Promise<void>;
}
