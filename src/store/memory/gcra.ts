/**
 * GCRA bucket math: the executable specification of lua/gcra.lua and the GCRA half of lua/refund.lua.
 * Both implementations run the same IEEE-754 double operations in the same order, so they agree
 * exactly on `allowed` and `remaining` for the same stored state and the same `now`.
 *
 * State is the theoretical arrival time `tat` in integer microseconds. With emission interval
 * T = periodMs*1000/limit and capacity tau = T*burst, a bucket is full when `tat <= now`. The math
 * runs on `ahead = tat - now` (exact: two integers), never on the 16-digit tat itself, with a
 * rounding slack for the whole-µs storage (see `slackOf`).
 */
import type { Policy } from "../../engine/types.js";
import type { Outcome } from "../store.js";
import { denied } from "./outcome.js";

/** Added before flooring token counts so that 2.9999999999 whole tokens count as 3. */
const TOKEN_EPSILON = 1e-9;

/**
 * Slack (µs) for the storage rounding of the tat. Each write rounds it to a whole µs (up to 0.5 µs
 * off), and the errors of the writes since the bucket was last full add up: without slack a bucket
 * of burst 4 at 7 per minute (T = 8571428.57 µs) refused its 4th token within the same µs and showed
 * one token less than it held. Half a µs per token of burst covers every write since full; capped
 * at half an emission interval, so it never amounts to a token.
 */
function slackOf(t: number, burst: number): number {
  return Math.min(0.5 * burst, 0.5 * t);
}

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

/** Emission interval T, capacity tau and rounding slack in µs. */
function shape(policy: Policy): { t: number; tau: number; slack: number } {
  const t = (policy.periodMs * 1000) / policy.limit;
  return { t, tau: t * policy.burst, slack: slackOf(t, policy.burst) };
}

function wholeTokens(tau: number, t: number, slack: number, ahead: number): number {
  return Math.max(0, Math.floor((tau - ahead + slack) / t + TOKEN_EPSILON));
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
  const { t, tau, slack } = shape(input.policy);
  // Time ahead of now, in µs. `storedTat - now` is exact (two integers below 2^53); adding the charge
  // to it, not to the 16-digit tat, keeps every bit of `cost * T` (at epoch-µs magnitude a double is
  // only good to 0.25 µs, which put `remaining` one token low whenever T is not an integer).
  const ahead = Math.max((input.storedTat ?? now) - now, 0);
  const peekRemaining = wholeTokens(tau, t, slack, ahead);
  const peekResetMs = Math.ceil(ahead / 1000);
  const peek: Outcome = {
    allowed: true,
    remaining: peekRemaining,
    retryAfterMs: 0,
    resetAfterMs: peekResetMs,
  };
  if (cost < 0) return refundStep(input.nowUs, ahead, cost, t, tau, slack, peek);
  const maxDebt = input.policy.maxDebt;
  if (maxDebt !== undefined) return overdraftStep({ now, ahead, cost, maxDebt, t, tau, slack, peek });
  if (cost > input.policy.burst) {
    return { outcome: denied(peek, -1), uncharged: peek, write: undefined };
  }
  if (cost === 0) return { outcome: peek, uncharged: peek, write: undefined };
  const newAhead = ahead + cost * t;
  if (newAhead <= tau + slack) {
    const resetAfterMs = Math.ceil(newAhead / 1000);
    const tat = now + roundHalfUp(newAhead);
    return {
      outcome: {
        allowed: true,
        remaining: wholeTokens(tau, t, slack, newAhead),
        retryAfterMs: 0,
        resetAfterMs,
      },
      uncharged: peek,
      write: { tat, expiresAtMs: expiryOf(tat) },
    };
  }
  const retryAfterMs = Math.max(1, Math.ceil((newAhead - tau) / 1000));
  return { outcome: denied(peek, retryAfterMs), uncharged: peek, write: undefined };
}

/**
 * A negative cost (`is_negative_hits`): give `-cost` tokens back in the take call itself, never above
 * a full bucket; always allowed and always applied (its `uncharged` is its outcome). A full bucket
 * (nothing ahead of now) is left as it is.
 */
function refundStep(
  now: number,
  ahead: number,
  cost: number,
  t: number,
  tau: number,
  slack: number,
  peek: Outcome,
): GcraStep {
  if (ahead === 0) return { outcome: peek, uncharged: peek, write: undefined };
  const newAhead = Math.max(ahead + cost * t, 0);
  const tat = now + roundHalfUp(newAhead);
  const outcome: Outcome = {
    allowed: true,
    remaining: wholeTokens(tau, t, slack, newAhead),
    retryAfterMs: 0,
    resetAfterMs: Math.ceil(newAhead / 1000),
  };
  return { outcome, uncharged: outcome, write: { tat, expiresAtMs: expiryOf(tat) } };
}

interface OverdraftInput {
  readonly now: number;
  readonly ahead: number;
  readonly cost: number;
  readonly maxDebt: number;
  readonly t: number;
  readonly tau: number;
  readonly slack: number;
  readonly peek: Outcome;
}

/**
 * An overdraft bucket (`policy.maxDebt` set): allowed while it holds one whole token (a cost-1 take
 * would pass: `ahead + T <= tau + slack`); a positive cost is always applied, past empty, until the
 * time ahead reaches `tau + maxDebt*T` (never lowered by the cap). Denied, the retry counts until one
 * whole token is back, after the charge. Its `uncharged` is its outcome: it is applied in any case.
 */
function overdraftStep(o: OverdraftInput): GcraStep {
  const { ahead, t, tau, slack } = o;
  const admits = ahead + t <= tau + slack;
  if (o.cost === 0) {
    const outcome = admits ? o.peek : denied(o.peek, Math.max(1, Math.ceil((ahead + t - tau) / 1000)));
    return { outcome, uncharged: outcome, write: undefined };
  }
  let newAhead = ahead + o.cost * t;
  const cap = tau + o.maxDebt * t;
  if (newAhead > cap) newAhead = Math.max(cap, ahead);
  const tat = o.now + roundHalfUp(newAhead);
  const outcome: Outcome = {
    allowed: admits,
    remaining: wholeTokens(tau, t, slack, newAhead),
    retryAfterMs: admits ? 0 : Math.max(1, Math.ceil((newAhead + t - tau) / 1000)),
    resetAfterMs: Math.ceil(newAhead / 1000),
  };
  return { outcome, uncharged: outcome, write: { tat, expiresAtMs: expiryOf(tat) } };
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
