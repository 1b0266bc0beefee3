/**
 * GCRA bucket math: the executable specification of lua/gcra.lua and the GCRA half of lua/refund.lua.
 * Both implementations run the same IEEE-754 double operations in the same order, so they agree
 * exactly on `allowed` and `remaining` for the same stored state and the same `now`.
 *
 * State is the theoretical arrival time `tat` in integer microseconds. With emission interval
 * T = periodMs*1000/limit and capacity tau = T*burst, a bucket is full when `tat <= now`.
 */
import type { Policy } from "../../engine/types.js";
import type { Outcome } from "../store.js";
import { denied } from "./outcome.js";

/** Tolerance for `now >= allowAt` (µs): absorbs float error in `tat + c*T - tau`. */
const ADMIT_EPSILON_US = 1e-6;
/** Added before flooring token counts so that 2.9999999999 whole tokens count as 3. */
const TOKEN_EPSILON = 1e-9;

/** Input of one GCRA evaluation. */
export interface GcraInput {
  /** Stored theoretical arrival time (integer µs), undefined when the bucket is absent. */
  readonly storedTat: number | undefined;
  /** Current time in integer µs. */
  readonly nowUs: number;
  /** Tokens to charge; 0 peeks. */
  readonly cost: number;
  readonly policy: Policy;
}

/** What to store when the whole call is charged. */
export interface GcraWrite {
  /** New theoretical arrival time, rounded to integer µs. */
  readonly tat: number;
  /**
   * Absolute expiry in epoch ms (Redis `PXAT`): `ceil(tat / 1000) + 1`, so the key outlives `tat` on
   * a whole-ms expiry clock. Absolute, on the same clock as `tat`: a TTL relative to Redis' cached
   * command time could end early when the server stalls between starting the script and `TIME`.
   */
  readonly expiresAtMs: number;
}

/** Result of one GCRA evaluation: the outcome, and the write to apply when the call is charged. */
export interface GcraStep {
  readonly outcome: Outcome;
  /** The bucket as it is, uncharged: what an allowed Take reports when another Take of its call is denied. */
  readonly uncharged: Outcome;
  /** Undefined when nothing is written (peek or denied). */
  readonly write: GcraWrite | undefined;
}

/** Emission interval T and capacity tau in µs. */
function shape(policy: Policy): { t: number; tau: number } {
  const t = (policy.periodMs * 1000) / policy.limit;
  return { t, tau: t * policy.burst };
}

function wholeTokens(tau: number, t: number, ahead: number): number {
  return Math.max(0, Math.floor((tau - ahead) / t + TOKEN_EPSILON));
}

/** Round half up, written as in Lua (`math.floor(x + 0.5)`) so both agree on every input. */
export function roundHalfUp(x: number): number {
  return Math.floor(x + 0.5);
}

/** Absolute expiry (epoch ms) of a bucket whose theoretical arrival time is `tat` µs. */
function expiryOf(tat: number): number {
  return Math.ceil(tat / 1000) + 1;
}

/** Evaluate one GCRA bucket (see the module comment and lua/gcra.lua). */
export function gcraStep(input: GcraInput): GcraStep {
  const { nowUs: now, cost } = input;
  const { t, tau } = shape(input.policy);
  const tat = Math.max(input.storedTat ?? now, now);
  const peekRemaining = wholeTokens(tau, t, tat - now);
  const peekResetMs = Math.ceil((tat - now) / 1000);
  const peek: Outcome = {
    allowed: true,
    remaining: peekRemaining,
    retryAfterMs: 0,
    resetAfterMs: peekResetMs,
  };
  if (cost > input.policy.burst) {
    return { outcome: denied(peek, -1), uncharged: peek, write: undefined };
  }
  if (cost === 0) return { outcome: peek, uncharged: peek, write: undefined };
  const newTat = tat + cost * t;
  const allowAt = newTat - tau;
  if (now >= allowAt - ADMIT_EPSILON_US) {
    const resetAfterMs = Math.ceil((newTat - now) / 1000);
    return {
      outcome: { allowed: true, remaining: wholeTokens(tau, t, newTat - now), retryAfterMs: 0, resetAfterMs },
      uncharged: peek,
      write: { tat: roundHalfUp(newTat), expiresAtMs: expiryOf(newTat) },
    };
  }
  const retryAfterMs = Math.max(1, Math.ceil((allowAt - now) / 1000));
  return { outcome: denied(peek, retryAfterMs), uncharged: peek, write: undefined };
}

/** Input of a GCRA refund: give `cost` tokens back. */
export type GcraRefundInput = GcraInput;

/**
 * Refund `cost` tokens: `tat - cost*T`. Returns the write to apply, `"delete"` when the bucket is full
 * again, or undefined when the bucket is absent (already full: nothing to give back).
 */
export function gcraRefund(input: GcraRefundInput): GcraWrite | "delete" | undefined {
  if (input.storedTat === undefined) return undefined;
  const { t } = shape(input.policy);
  const newTat = input.storedTat - input.cost * t;
  if (newTat <= input.nowUs) return "delete";
  return { tat: roundHalfUp(newTat), expiresAtMs: expiryOf(newTat) };
}
