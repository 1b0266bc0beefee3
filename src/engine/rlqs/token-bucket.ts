/**
 * An assigned rate as the token bucket Envoy's rate_limit_quota filter enforces.
 *
 * Envoy builds its bucket with `fill rate = tokens_per_fill / whole seconds of fill_interval`, starts
 * it full (`max_tokens`), and keeps a running bucket only when a new assignment has the same
 * max_tokens, tokens_per_fill and fill_interval nanos. So tollgate sends:
 *
 * - `fill_interval`: whole seconds, fixed per shared limit (never varied between assignments), long
 *   enough that the whole limit is at least {@link RESOLUTION} tokens per interval (capped at
 *   {@link MAX_FILL_SEC}): the rounding of one Envoy's rate costs at most 1/RESOLUTION of the limit;
 * - `tokens_per_fill`: the rate × interval rounded DOWN, at least 1 (so the sum of assigned rates
 *   never exceeds the limit, except that an Envoy whose share is below one token per interval still
 *   gets one: at most n tokens per interval over, n the Envoys below that);
 * - `max_tokens`: the Envoy's share of the limit's burst, rounded down, at least 1 (same bound).
 */
import type { SharedLimit } from "./resolve.js";

/** Tokens per fill interval the whole limit gets at least (when the interval cap allows). */
export const RESOLUTION = 1000;
/** Longest fill interval sent, seconds. */
export const MAX_FILL_SEC = 3600;

/** The token bucket of one assignment. */
export interface TokenBucketSpec {
  readonly maxTokens: number;
  readonly tokensPerFill: number;
  readonly fillIntervalSec: number;
}

const UINT32_MAX = 4_294_967_295;

/** The fill interval of a shared limit, whole seconds. */
export function fillIntervalSec(limit: SharedLimit): number {
  return Math.min(MAX_FILL_SEC, Math.max(1, Math.ceil(RESOLUTION / limit.ratePerSec)));
}

/**
 * `x` rounded down, except that a float product a hair below a whole number (61 / 7 × 7 is
 * 60.99999999999999) counts as that number: so `tokenBucketFor(rateOf(tb))` gives `tb` back, and a
 * held rate recomputed from its bucket is never taken for a change (a re-send restarts the Envoy's
 * bucket full).
 */
function floorTokens(x: number): number {
  const down = Math.floor(x);
  return down + 1 - x <= 1e-9 * Math.max(1, x) ? down + 1 : down;
}

/** The token bucket enforcing `rate` (requests per second) as one Envoy's share of `limit`. */
export function tokenBucketFor(rate: number, limit: SharedLimit): TokenBucketSpec {
  const sec = fillIntervalSec(limit);
  const share = limit.ratePerSec > 0 ? Math.max(0, rate) / limit.ratePerSec : 0;
  return {
    maxTokens: Math.min(UINT32_MAX, Math.max(1, Math.floor(limit.burst * share))),
    tokensPerFill: Math.min(UINT32_MAX, Math.max(1, floorTokens(rate * sec))),
    fillIntervalSec: sec,
  };
}

/** The rate a token bucket enforces, requests per second (as Envoy computes it). */
export function rateOf(tb: TokenBucketSpec): number {
  return tb.tokensPerFill / tb.fillIntervalSec;
}
