/**
 * Fixed-window counter math: the executable specification of lua/fixed_window.lua and the
 * fixed-window half of lua/refund.lua.
 *
 * Windows are epoch-aligned as in envoyproxy/ratelimit (so a week starts on Thursday UTC, month is
 * 30 days, year 365 days). State is one integer counter per bucket whose TTL ends exactly at the
 * window end, so the key needs no window suffix: an expired counter is the next window's zero.
 * A calendar policy (`calendar: true`) ends its window at the next calendar boundary of its time
 * zone instead (engine/calendar.ts); the Lua script gets the boundaries as ARGV and picks with TIME.
 */
import { calendarWindow, pickWindowEnd } from "../../engine/calendar.js";
import type { Policy } from "../../engine/types.js";
import type { Outcome } from "../store.js";
import { denied } from "./outcome.js";

/** Input of one fixed-window evaluation. */
export interface FixedWindowInput {
  /** Stored count of the current window, undefined when absent (expired or never written). */
  readonly storedCount: number | undefined;
  /** Current time in integer µs. */
  readonly nowUs: number;
  /** Hits to count; 0 peeks. */
  readonly cost: number;
  readonly policy: Policy;
}

/** What to store when the whole call is charged. */
export interface FixedWindowWrite {
  /** New counter value. */
  readonly count: number;
  /** Absolute window end in epoch ms (Redis `PXAT`), set when the counter is created, kept on increments. */
  readonly expiresAtMs: number;
}

/** Result of one fixed-window evaluation. */
export interface FixedWindowStep {
  readonly outcome: Outcome;
  /** The counter as it is, uncharged: what an allowed Take reports when another Take of its call is denied. */
  readonly uncharged: Outcome;
  /** Undefined when nothing is written (peek or denied). */
  readonly write: FixedWindowWrite | undefined;
}

/** Ms from `nowUs` to the end of the epoch-aligned window of `periodMs` that contains it. */
export function msToWindowEnd(nowUs: number, periodMs: number): number {
  const nowMs = Math.floor(nowUs / 1000);
  const windowEndMs = (Math.floor(nowMs / periodMs) + 1) * periodMs;
  return windowEndMs - nowMs;
}

/** Ms from `nowUs` to the end of `policy`'s window: calendar or epoch-aligned. */
export function msToPolicyWindowEnd(nowUs: number, policy: Policy): number {
  if (policy.calendar === undefined) return msToWindowEnd(nowUs, policy.periodMs);
  const nowMs = Math.floor(nowUs / 1000);
  // The window comes from the same clock, so the pick always finds it.
  const endMs = pickWindowEnd(nowMs, calendarWindow(nowMs, policy.calendar)) ?? nowMs + policy.periodMs;
  return endMs - nowMs;
}

/** Evaluate one fixed-window bucket (see the module comment and lua/fixed_window.lua). */
export function fixedWindowStep(input: FixedWindowInput): FixedWindowStep {
  const { cost } = input;
  const limit = input.policy.limit;
  const ttlMs = msToPolicyWindowEnd(input.nowUs, input.policy);
  const count = input.storedCount ?? 0;
  const peek: Outcome = {
    allowed: true,
    remaining: Math.max(0, limit - count),
    retryAfterMs: 0,
    resetAfterMs: ttlMs,
  };
  const expiresAtMs = Math.floor(input.nowUs / 1000) + ttlMs;
  if (cost < 0) {
    // A refund (`is_negative_hits`): the counter goes down, never below 0; an absent counter stays absent.
    if (input.storedCount === undefined) return { outcome: peek, uncharged: peek, write: undefined };
    const next = Math.max(0, count + cost);
    const outcome: Outcome = { ...peek, remaining: Math.max(0, limit - next) };
    return { outcome, uncharged: outcome, write: { count: next, expiresAtMs } };
  }
  const maxDebt = input.policy.maxDebt;
  if (maxDebt !== undefined) {
    // Overdraft: allowed while one hit is left; a charge always counts, up to limit + maxDebt (a cap
    // never lowers the counter). The window end forgives the debt.
    const admits = count < limit;
    let next = count + cost;
    if (next > limit + maxDebt) next = Math.max(limit + maxDebt, count);
    const outcome: Outcome = {
      allowed: admits,
      remaining: Math.max(0, limit - next),
      retryAfterMs: admits ? 0 : ttlMs,
      resetAfterMs: ttlMs,
    };
    return { outcome, uncharged: outcome, write: cost > 0 ? { count: next, expiresAtMs } : undefined };
  }
  if (cost > limit) {
    return { outcome: denied(peek, -1), uncharged: peek, write: undefined };
  }
  if (count + cost > limit) {
    return { outcome: denied(peek, ttlMs), uncharged: peek, write: undefined };
  }
  return {
    outcome: { allowed: true, remaining: limit - count - cost, retryAfterMs: 0, resetAfterMs: ttlMs },
    uncharged: peek,
    write: cost > 0 ? { count: count + cost, expiresAtMs } : undefined,
  };
}

/** Refund `cost` hits: the new count (not below 0, TTL kept), or undefined when the counter is absent. */
export function fixedWindowRefund(storedCount: number | undefined, cost: number): number | undefined {
  if (storedCount === undefined) return undefined;
  return Math.max(0, storedCount - cost);
}
