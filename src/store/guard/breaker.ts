/**
 * The circuit breaker of the guard: a pure state machine over an injected clock and random source.
 *
 * - `closed`: every call goes through. It opens after `consecutiveFailures` failures in a row, or when
 *   at least `minRequests` calls in the last `windowMs` failed at `failureRatio` or more.
 * - `open`: no call goes through (nobody waits on the store) until the open time has passed; the open
 *   time grows exponentially with back-to-back openings, with jitter and a cap (see backoff.ts).
 * - `half_open`: up to `halfOpenProbes` calls go through at once as probes. The first successful probe
 *   closes the breaker; a failed probe reopens it with the next, longer, open time.
 *
 * `storeReady()` half-opens an open breaker before its time is up: the store reported that it is
 * connected again, so the next call probes now instead of at the end of the open time.
 * `storeNotReady()` opens a closed breaker at once (the store could not connect at start).
 */
import type { Clock } from "../../engine/types.js";
import { type BackoffSettings, openDurationMs } from "./backoff.js";
import { SlidingWindow } from "./window.js";

/** Breaker states (same spelling as the `tollgate_breaker_state` metric). */
export type BreakerState = "closed" | "open" | "half_open";

/** Why the breaker changed state. */
export type TransitionReason =
  | "consecutive_failures"
  | "failure_ratio"
  | "probe_failed"
  | "open_elapsed"
  | "store_ready"
  | "store_not_ready"
  | "probe_succeeded";

/** Breaker settings; every field has a default in {@link DEFAULT_BREAKER}. */
export interface BreakerSettings extends BackoffSettings {
  /** Failures in a row that open the breaker. @default 5 */
  readonly consecutiveFailures: number;
  /** Failure ratio over the window that opens the breaker (0–1]. @default 0.5 */
  readonly failureRatio: number;
  /** Sliding window of the ratio, ms. @default 10000 */
  readonly windowMs: number;
  /** Calls needed in the window before the ratio counts. @default 20 */
  readonly minRequests: number;
  /** Probes let through at once while half-open. @default 1 */
  readonly halfOpenProbes: number;
}

export const DEFAULT_BREAKER: BreakerSettings = Object.freeze({
  consecutiveFailures: 5,
  failureRatio: 0.5,
  windowMs: 10_000,
  minRequests: 20,
  halfOpenProbes: 1,
  baseMs: 250,
  multiplier: 2,
  maxMs: 1_000,
  jitter: 0.2,
});

/** The last failure seen, for status pages. */
export interface LastError {
  readonly code: string;
  readonly message: string;
  /** Epoch ms. */
  readonly at: number;
}

/** One state change, given to the transition listener exactly once. */
export interface Transition {
  readonly from: BreakerState;
  readonly to: BreakerState;
  readonly reason: TransitionReason;
  /** Epoch ms. */
  readonly at: number;
  /** When `to` is `open`: how long it stays open, ms. */
  readonly openMs: number | undefined;
  readonly lastError: LastError | undefined;
}

/** A point-in-time view of the breaker. */
export interface BreakerSnapshot {
  readonly state: BreakerState;
  /** Epoch ms of the last transition (construction time at first). */
  readonly since: number;
  /** Epoch ms when an open breaker half-opens; undefined unless open. */
  readonly openUntil: number | undefined;
  readonly consecutiveFailures: number;
  /** Back-to-back openings so far (0 after a close). */
  readonly reopenAttempt: number;
  readonly lastError: LastError | undefined;
}

/** Permission for one call; hand it back to `success` or `failure`. */
export interface Permit {
  readonly probe: boolean;
  readonly generation: number;
}

/** Options of {@link CircuitBreaker}. */
export interface CircuitBreakerOptions {
  readonly clock: Clock;
  readonly settings?: Partial<BreakerSettings>;
  /** Uniform `[0, 1)` source for jitter. @default Math.random */
  readonly random?: () => number;
  readonly onTransition?: (t: Transition) => void;
}

export class CircuitBreaker {
  readonly settings: BreakerSettings;
  readonly #clock: Clock;
  readonly #random: () => number;
  readonly #onTransition: (t: Transition) => void;
  readonly #window: SlidingWindow;
  #state: BreakerState = "closed";
  #since: number;
  #openUntil = 0;
  #consecutive = 0;
  #attempt = 0;
  #probesInFlight = 0;
  #generation = 0;
  #lastError: LastError | undefined;

  constructor(opts: CircuitBreakerOptions) {
    const s = { ...DEFAULT_BREAKER, ...opts.settings };
    // The cap is never below the first open time: an explicit longer base is honoured (and then no
    // longer grows) rather than silently cut to the default cap.
    this.settings = Object.freeze({ ...s, maxMs: Math.max(s.maxMs, s.baseMs) });
    this.#clock = opts.clock;
    this.#random = opts.random ?? Math.random;
    this.#onTransition = opts.onTransition ?? (() => {});
    this.#window = new SlidingWindow({ windowMs: this.settings.windowMs });
    this.#since = opts.clock.now();
  }

  /** A permit when a call may go to the store now, else undefined (answer by policy, do not wait). */
  acquire(): Permit | undefined {
    if (this.#state === "closed") return { probe: false, generation: this.#generation };
    if (this.#state === "open") {
      if (this.#clock.now() < this.#openUntil) return undefined;
      this.#move("half_open", "open_elapsed", undefined);
    }
    if (this.#probesInFlight >= this.settings.halfOpenProbes) return undefined;
    this.#probesInFlight++;
    return { probe: true, generation: this.#generation };
  }

  /**
   * The store says it is connected and ready again (e.g. the Redis client reconnected): an open breaker
   * half-opens now, so the next call probes without waiting out the open time. The probe still decides;
   * a failed one reopens with the next, longer, open time. No effect unless open.
   */
  storeReady(): void {
    if (this.#state === "open") this.#move("half_open", "store_ready", undefined);
  }

  /**
   * The store says it cannot serve (not connected at start): a closed breaker opens now, so calls are
   * answered by policy at once instead of each waiting out a deadline, and the status says degraded.
   * The usual open time and probes follow; `storeReady()` half-opens it as soon as the store connects.
   */
  storeNotReady(error: { code: string; message: string }): void {
    if (this.#state !== "closed") return;
    const now = this.#clock.now();
    this.#lastError = { code: error.code, message: error.message, at: now };
    this.#move("open", "store_not_ready", now);
  }

  /** The permitted call answered in time. */
  success(permit: Permit): void {
    if (permit.generation !== this.#generation) return;
    if (permit.probe) {
      this.#probesInFlight--;
      this.#move("closed", "probe_succeeded", undefined);
      return;
    }
    this.#consecutive = 0;
    this.#window.record(this.#clock.now(), false);
  }

  /** The permitted call failed or missed its deadline. */
  failure(permit: Permit, error: { code: string; message: string }): void {
    const now = this.#clock.now();
    this.#lastError = { code: error.code, message: error.message, at: now };
    if (permit.generation !== this.#generation) return;
    if (permit.probe) {
      this.#probesInFlight--;
      this.#attempt++;
      this.#move("open", "probe_failed", now);
      return;
    }
    this.#consecutive++;
    this.#window.record(now, true);
    const s = this.settings;
    const { total, failures } = this.#window.counts(now);
    if (this.#consecutive >= s.consecutiveFailures) this.#move("open", "consecutive_failures", now);
    else if (total >= s.minRequests && failures / total >= s.failureRatio)
      this.#move("open", "failure_ratio", now);
  }

  /** Ms until an open breaker half-opens (0 unless open). */
  remainingOpenMs(): number {
    return this.#state === "open" ? Math.max(0, this.#openUntil - this.#clock.now()) : 0;
  }

  snapshot(): BreakerSnapshot {
    return {
      state: this.#state,
      since: this.#since,
      openUntil: this.#state === "open" ? this.#openUntil : undefined,
      consecutiveFailures: this.#consecutive,
      reopenAttempt: this.#attempt,
      lastError: this.#lastError,
    };
  }

  #move(to: BreakerState, reason: TransitionReason, openedAt: number | undefined): void {
    const from = this.#state;
    const at = openedAt ?? this.#clock.now();
    let openMs: number | undefined;
    if (to === "open") {
      openMs = openDurationMs(this.settings, this.#attempt, this.#random);
      this.#openUntil = at + openMs;
    }
    if (to === "closed") {
      this.#attempt = 0;
      this.#window.clear();
    }
    if (to !== "half_open") this.#probesInFlight = 0;
    this.#consecutive = 0;
    this.#state = to;
    this.#since = at;
    this.#generation++;
    this.#onTransition({ from, to, reason, at, openMs, lastError: this.#lastError });
  }
}
