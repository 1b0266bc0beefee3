/**
 * The one place a bucket `Policy` is made from a limit as written (config descriptors, tiers and
 * request-supplied overrides all come through here), and a `RuleLimit` from a checked limit.
 */
import { type Algorithm, type Policy, type RuleLimit, UNIT_MS, type Unit } from "./types.js";

/** A limit as written: `requests_per_unit` per `unit`, its algorithm and optional `burst`. */
export interface LimitTerms {
  readonly algorithm: Algorithm;
  readonly requestsPerUnit: number;
  readonly unit: Unit;
  /** GCRA capacity; undefined (and always, for `fixed_window`) means `requests_per_unit`. */
  readonly burst?: number | undefined;
  /** `calendar: true` with its time zone (fixed_window of unit day, week, month or year only). */
  readonly calendar?: { readonly timeZone: string } | undefined;
  /** An overdraft rule's debt bound in hits (`Policy.maxDebt`); undefined for an ordinary bucket. */
  readonly maxDebt?: number | undefined;
}

/**
 * The frozen bucket policy of a limit. `requests_per_unit` 0 is kept as written: the engine answers
 * such a limit without touching a bucket.
 */
export function policyOf(t: LimitTerms): Policy {
  const burst = t.algorithm === "fixed_window" ? t.requestsPerUnit : (t.burst ?? t.requestsPerUnit);
  const plain = { algorithm: t.algorithm, limit: t.requestsPerUnit, periodMs: UNIT_MS[t.unit], burst };
  const base = t.maxDebt === undefined ? plain : { ...plain, maxDebt: t.maxDebt };
  // check.ts accepts calendar only on fixed_window limits of unit day, week, month or year.
  const unit = t.unit;
  if (t.calendar === undefined || !(unit === "day" || unit === "week" || unit === "month" || unit === "year"))
    return Object.freeze(base);
  return Object.freeze({ ...base, calendar: Object.freeze({ unit, timeZone: t.calendar.timeZone }) });
}

/** The frozen rule limit of a limit as written, with its {@link policyOf}. */
export function ruleLimitOf(t: LimitTerms & { readonly name: string | undefined }): RuleLimit {
  return Object.freeze({
    name: t.name,
    unit: t.unit,
    requestsPerUnit: t.requestsPerUnit,
    policy: policyOf(t),
  });
}
