/**
 * The one reader of limits as written in config: a descriptor's or a tier row's `rate_limit` /
 * `rate_limits` (`parseLimits`) and each limit in them (`parseLimit`), with the same rules and the
 * same error text wherever they appear. Types and unknown keys were checked by the schema walker.
 */
import type { Algorithm } from "../engine/types.js";
import { child, choice, count, flag, has, items, type Row, text } from "./fields.js";
import { ROWS } from "./schema.js";
import type { LimitSpec } from "./spec.js";
import type { CheckedObject } from "./walk.js";

/** Where the limit readers report and what they default to. */
export interface LimitContext {
  /** Algorithm of limits that do not name one. */
  readonly defaultAlgorithm: Algorithm;
  /** Report at key `k` of `o` (or at `o` itself when `k` is undefined). */
  readonly problem: (o: CheckedObject, k: string | undefined, message: string) => void;
}

/** The `rate_limit` / `rate_limits` rows of the object holding the limits (a descriptor, a tier row). */
export interface LimitRows {
  readonly rate_limit: Row<{ readonly kind: "object"; readonly context: string }>;
  readonly rate_limits: Row<{ readonly kind: "list"; readonly context: string }>;
}

/** What {@link parseLimits} found on one object. */
export interface ParsedLimits {
  /** `rate_limit`, or a non-empty `rate_limits`, is present. */
  readonly hasRule: boolean;
  /** The `rate_limit` object itself (for `unlimited` and `replaces`), when present. */
  readonly single: CheckedObject | undefined;
  /** Every complete limit, in order (`rate_limit`, then the `rate_limits` items). */
  readonly limits: readonly LimitSpec[];
  /** True when every limit present was complete and no problem was reported about the pair. */
  readonly complete: boolean;
}

/**
 * Read `rate_limit` / `rate_limits` of `o` (a descriptor, a tier row). Both at once is an error;
 * `required`: neither is an error too. `unlimited`: `unlimited: true` is allowed on `rate_limit`
 * (descriptors; never on a `rate_limits` item).
 */
export function parseLimits(
  o: CheckedObject,
  ctx: LimitContext,
  opts: { readonly rows: LimitRows; readonly required: boolean; readonly unlimited: boolean },
): ParsedLimits {
  const single = child(o, opts.rows.rate_limit);
  // Written but invalid counts as written: the pair rules still apply.
  const many = has(o, opts.rows.rate_limits) ? (items(o, opts.rows.rate_limits) ?? []) : undefined;
  const singleWritten = has(o, opts.rows.rate_limit);
  let complete = true;
  if (singleWritten && many !== undefined) {
    ctx.problem(
      o,
      "rate_limits",
      'cannot be used together with "rate_limit" (put every limit in rate_limits)',
    );
    complete = false;
  }
  if (opts.required && !singleWritten && many === undefined) {
    ctx.problem(o, undefined, 'needs "rate_limit" or "rate_limits"');
    complete = false;
  }
  if (many !== undefined && many.length === 0) {
    ctx.problem(o, "rate_limits", "must contain at least one limit");
    complete = false;
  }
  const limits: LimitSpec[] = [];
  const unlimited = opts.unlimited && single !== undefined && flag(single, ROWS.unlimited);
  const read = (l: CheckedObject, unlimitedAllowed: boolean) => {
    const spec = parseLimit(l, ctx, { unlimitedAllowed });
    if (spec !== undefined) limits.push(spec);
    else if (!(unlimitedAllowed && unlimited)) complete = false;
  };
  if (single !== undefined) read(single, opts.unlimited);
  for (const item of many ?? []) read(item, false);
  return {
    hasRule: single !== undefined || (many !== undefined && many.length > 0),
    single,
    limits,
    complete,
  };
}

/**
 * Read one limit: `unit` and `requests_per_unit` required (unless `unlimited: true` where allowed),
 * `burst` refused under fixed windows. Undefined when unlimited or incomplete (problems reported).
 */
export function parseLimit(
  l: CheckedObject,
  ctx: LimitContext,
  opts: { readonly unlimitedAllowed: boolean },
): LimitSpec | undefined {
  if (opts.unlimitedAllowed && flag(l, ROWS.unlimited)) {
    if (has(l, ROWS.unit)) ctx.problem(l, "unit", "should not be set when unlimited is true");
    if (has(l, ROWS.burst)) ctx.problem(l, "burst", "should not be set when unlimited is true");
    return undefined;
  }
  const hint = opts.unlimitedAllowed ? " (or set unlimited: true)" : "";
  for (const row of [ROWS.unit, ROWS.requests_per_unit]) {
    if (!has(l, row)) ctx.problem(l, undefined, `missing required key "${row.name}"${hint}`);
  }
  const algorithm = choice(l, ROWS.algorithm) ?? ctx.defaultAlgorithm;
  if (algorithm === "fixed_window" && has(l, ROWS.burst)) {
    ctx.problem(l, "burst", "is not allowed with algorithm fixed_window (a window admits requests_per_unit)");
  }
  const unit = choice(l, ROWS.unit);
  const requestsPerUnit = count(l, ROWS.requests_per_unit);
  if (unit === undefined || requestsPerUnit === undefined) return undefined;
  return { name: text(l, ROWS.name), unit, requestsPerUnit, algorithm, burst: count(l, ROWS.burst) };
}
