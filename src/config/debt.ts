/**
 * The debt bound of an overdraft rule (`overdraft: true`, `max_debt`), in hits past empty, per limit.
 *
 * A stream-done charge is whatever the response cost (LLM tokens), known only after the fact, so an
 * overdraft bucket must take charges far above its capacity. A nonsense cost must still not lock a
 * tenant out for years: debt stops at `max_debt` hits, which defaults to {@link DEFAULT_DEBT_LIMITS}
 * times the limit's `requests_per_unit` (a 10,000-token-per-minute budget takes a 100,000-token
 * overshoot: ten minutes of denials), and never takes more than {@link MAX_DEBT_DAYS} days to repay
 * (a configured `max_debt` above that is a config error; the default is lowered to it).
 */

import { UNIT_MS } from "../engine/types.js";
import { MAX_DEBT_HITS } from "./schema.js";
import type { LimitSpec } from "./spec.js";

/** Default `max_debt`: this many times the limit's `requests_per_unit`. */
export const DEFAULT_DEBT_LIMITS = 10;

/** The longest a debt may take to repay, in days. */
export const MAX_DEBT_DAYS = 366;

/** The largest debt `l` repays within {@link MAX_DEBT_DAYS} days (and at most {@link MAX_DEBT_HITS}). */
export function maxDebtCap(l: Pick<LimitSpec, "requestsPerUnit" | "unit">): number {
  const periods = (MAX_DEBT_DAYS * 86_400_000) / UNIT_MS[l.unit];
  return Math.min(MAX_DEBT_HITS, Math.floor(l.requestsPerUnit * periods));
}

/** The debt bound of limit `l` of an overdraft rule: `configured` (checked), else the default. */
export function maxDebtOf(
  l: Pick<LimitSpec, "requestsPerUnit" | "unit">,
  configured: number | undefined,
): number {
  const cap = maxDebtCap(l);
  return Math.min(configured ?? DEFAULT_DEBT_LIMITS * l.requestsPerUnit, cap);
}
