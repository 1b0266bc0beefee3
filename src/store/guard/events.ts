/**
 * What the guard reports outward: a pino-compatible logger for one line per transition, and the
 * state events the metrics module turns into gauges (`TollgateMetrics` satisfies {@link GuardEvents}).
 */
import type { BreakerState } from "./breaker.js";

/** The pino methods the guard uses (a pino `Logger` fits). */
export interface GuardLogger {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  /** The probing cycle of an outage (open ⇄ half-open). @default not logged */
  debug?(obj: object, msg: string): void;
}

/** State events for metrics. */
export interface GuardEvents {
  /** The breaker changed state (`tollgate_breaker_state`). */
  breakerState(state: BreakerState): void;
  /** Degraded mode entered or left: decisions follow the failure policy (`tollgate_degraded`). */
  degraded(active: boolean): void;
  /** A take failed or was not attempted, by kind (`timeout`, `connection`, …, `circuit_open`). */
  storeError(kind: string): void;
}

export const noopLogger: GuardLogger = { info() {}, warn() {} };

export const noopGuardEvents: GuardEvents = { breakerState() {}, degraded() {}, storeError() {} };
