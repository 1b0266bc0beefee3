/**
 * `GuardedStore`: a decorator over any Store that bounds every call by a deadline, stops calling a
 * failing store (circuit breaker), and answers failed or skipped takes by the failure policy
 * (`local` fallback, `allow`, `deny`, `error`). See docs/resilience.md.
 */
import {
  type Clock,
  type FailurePolicy,
  systemClock,
  systemTimers,
  type Timers,
} from "../../engine/types.js";
import { type Outcome, reportOnce, type Store, StoreError, type Take } from "../store.js";
import { type BreakerSettings, type BreakerState, CircuitBreaker, type Transition } from "./breaker.js";
import { type DeadlineOptions, withDeadline } from "./deadline.js";
import { type GuardEvents, type GuardLogger, noopGuardEvents, noopLogger } from "./events.js";
import { type InstanceCount, LocalFallback } from "./fallback.js";
import { OutageLog } from "./outage-log.js";
import { allowAll, denyAll, type PolicyResolver, resolveByTakes, unavailable } from "./policy.js";
import { type GuardStatus, statusOf } from "./status.js";

/** Options of {@link GuardedStore}. */
export interface GuardedStoreOptions {
  /** The store being guarded (Redis, Redis Cluster, …). */
  readonly inner: Store;
  /** In-process store the `local` policy decides from (normally a `MemoryStore`). */
  readonly fallback: Store;
  /** Live instances the `local` policy divides limits by. @default always 1 */
  readonly instances?: InstanceCount;
  /** Milliseconds a take may wait on the inner store before it counts as failed. @default 10 */
  readonly deadlineMs?: number;
  /** Circuit breaker settings (see `DEFAULT_BREAKER`). */
  readonly breaker?: Partial<BreakerSettings>;
  /** Policy when a take carries no `onStoreError`. @default "local" */
  readonly defaultPolicy?: FailurePolicy;
  /** Overrides how a batch's policy is chosen. @default resolveByTakes(defaultPolicy) */
  readonly policy?: PolicyResolver;
  /** @default systemClock */
  readonly clock?: Clock;
  /** @default systemTimers */
  readonly timers?: Timers;
  /** Jitter source, `[0, 1)`. @default Math.random */
  readonly random?: () => number;
  /** One line when the breaker opens, one when it closes, a summary a minute between (outage-log.ts). @default silent */
  readonly logger?: GuardLogger;
  /** Breaker/degraded gauges and error counts. @default none */
  readonly events?: GuardEvents;
}

const SINGLE: InstanceCount = { count: () => 1 };

/** What the guard bounds by its deadline. */
type GuardedOperation = "take" | "reset" | "refund";

export class GuardedStore implements Store {
  readonly kind: string;
  readonly #inner: Store;
  readonly #fallback: LocalFallback;
  readonly #breaker: CircuitBreaker;
  readonly #deadlineMs: number;
  readonly #defaultPolicy: FailurePolicy;
  readonly #policy: PolicyResolver;
  readonly #timers: Timers;
  readonly #instances: InstanceCount;
  readonly #logger: GuardLogger;
  readonly #outageLog: OutageLog;
  readonly #events: GuardEvents;
  #lateAnswers = 0;
  /** The deadline of each operation, built once (the same for every call). */
  readonly #deadlines: Readonly<Record<GuardedOperation, DeadlineOptions>>;

  constructor(opts: GuardedStoreOptions) {
    this.kind = `guard(${opts.inner.kind})`;
    this.#inner = opts.inner;
    this.#instances = opts.instances ?? SINGLE;
    this.#fallback = new LocalFallback({ store: opts.fallback, instances: this.#instances });
    this.#deadlineMs = opts.deadlineMs ?? 10;
    this.#timers = opts.timers ?? systemTimers;
    const onLate = () => {
      this.#lateAnswers++;
    };
    const deadline = (operation: GuardedOperation): DeadlineOptions => ({
      ms: this.#deadlineMs,
      timers: this.#timers,
      operation,
      onLate,
    });
    this.#deadlines = { take: deadline("take"), reset: deadline("reset"), refund: deadline("refund") };
    this.#defaultPolicy = opts.defaultPolicy ?? "local";
    this.#policy = opts.policy ?? resolveByTakes(this.#defaultPolicy);
    this.#logger = opts.logger ?? noopLogger;
    this.#events = opts.events ?? noopGuardEvents;
    this.#outageLog = new OutageLog({ logger: this.#logger, defaultPolicy: this.#defaultPolicy });
    this.#breaker = new CircuitBreaker({
      clock: opts.clock ?? systemClock,
      settings: opts.breaker ?? {},
      random: opts.random ?? Math.random,
      onTransition: (t) => this.#transitioned(t),
    });
  }

  take(takes: readonly Take[]): Promise<Outcome[]> {
    const permit = this.#breaker.acquire();
    if (permit === undefined) {
      this.#events.storeError("circuit_open");
      return this.#byPolicy(takes, this.#breaker.snapshot().lastError);
    }
    // A promise chain rather than an async function: one promise less per call on the hot path.
    return this.#bounded("take", () => this.#inner.take(takes)).then(
      (outcomes) => {
        this.#breaker.success(permit);
        return outcomes;
      },
      (err: unknown) => {
        const e = asStoreError(err);
        reportOnce(e, this.#events);
        this.#breaker.failure(permit, e);
        return this.#byPolicy(takes, e);
      },
    );
  }

  /** Resets the buckets in the inner store (bounded by the deadline) and in the fallback. */
  async reset(keys: readonly string[]): Promise<void> {
    const local = this.#fallback.store.reset(keys);
    try {
      await this.#bounded("reset", () => this.#inner.reset(keys));
    } catch (err) {
      throw unavailable(err);
    } finally {
      await local;
    }
  }

  /**
   * Forwards a refund to the inner store within the deadline. While the breaker is not closed it fails
   * at once with `unavailable` (a lost refund only under-admits, never over-admits).
   */
  async refund(takes: readonly Take[]): Promise<void> {
    const inner = this.#inner;
    if (inner.refund === undefined) return;
    if (this.state !== "closed") throw unavailable(this.#breaker.snapshot().lastError);
    try {
      await this.#bounded("refund", () => inner.refund?.(takes) ?? Promise.resolve());
    } catch (err) {
      throw unavailable(err);
    }
  }

  /**
   * Waits for the inner store, but never fails: a store that is down at boot must not keep the service
   * from starting (under Envoy's `failure_mode_deny` a rate limiter that refuses to start turns a Redis
   * outage into a gateway outage). The guard answers by policy until the store comes back: the
   * failure is logged once, and the breaker opens at once (degraded on status and metrics; it probes
   * as usual, and at once when the store reports it connected).
   */
  async ready(): Promise<void> {
    try {
      await this.#inner.ready();
    } catch (err) {
      const e = asStoreError(err);
      reportOnce(e, this.#events);
      this.#logger.warn(
        { code: e.code, err: e.message, defaultPolicy: this.#defaultPolicy },
        "store not ready at start: serving by the failure policy until it answers",
      );
      this.#breaker.storeNotReady(e);
    }
  }

  /**
   * The inner store reports that it is connected and ready again (see `Store.onReady`): an open
   * breaker half-opens now, so recovery does not wait out the open time. Wired by the caller, who
   * knows which store (or cluster node) this guard covers.
   */
  storeReady(): void {
    this.#breaker.storeReady();
  }

  async close(): Promise<void> {
    await Promise.allSettled([this.#inner.close(), this.#fallback.store.close()]);
  }

  /** State for `/rlconfig` and health details. */
  status(): GuardStatus {
    return statusOf(this.#breaker.snapshot(), {
      kind: this.kind,
      deadlineMs: this.#deadlineMs,
      defaultPolicy: this.#defaultPolicy,
      instances: this.#instances.count(),
      lateAnswers: this.#lateAnswers,
    });
  }

  /** The current breaker state. */
  get state(): BreakerState {
    return this.#breaker.snapshot().state;
  }

  #bounded<T>(operation: GuardedOperation, call: () => Promise<T>): Promise<T> {
    let pending: Promise<T>;
    try {
      pending = call();
    } catch (err) {
      pending = Promise.reject(err);
    }
    return withDeadline(pending, this.#deadlines[operation]);
  }

  async #byPolicy(takes: readonly Take[], cause: unknown): Promise<Outcome[]> {
    switch (this.#policy(takes)) {
      case "allow":
        return allowAll(takes);
      case "deny":
        return denyAll(takes, this.#breaker.remainingOpenMs());
      case "error":
        throw unavailable(cause);
      case "local":
        try {
          return await this.#fallback.take(takes);
        } catch (err) {
          throw unavailable(err);
        }
    }
  }

  #transitioned(t: Transition): void {
    this.#outageLog.transitioned(t);
    this.#events.breakerState(t.to);
    const wasDegraded = t.from !== "closed";
    const isDegraded = t.to !== "closed";
    if (wasDegraded !== isDegraded) this.#events.degraded(isDegraded);
  }
}

/** Any failure as a classified StoreError; an unclassified throw is a non-transient `internal` one. */
function asStoreError(err: unknown): StoreError {
  if (err instanceof StoreError) return err;
  const message = err instanceof Error ? err.message : String(err);
  return new StoreError(`store failed: ${message}`, { code: "internal", transient: false, cause: err });
}
