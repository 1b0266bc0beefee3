/**
 * The one reader of limits as written in config: a descriptor's or a tier row's `rate_limit` /
 * `rate_limits` (`parseLimits`) and each limit in them (`parseLimit`), with the same rules and the
 * same error text wherever they appear. Types and unknown keys were checked by the schema walker.
 */
import type { Algorithm, Unit } from "../engine/types.js";
import type { LimitSpec } from "./spec.js";
import type { CheckedObject } from "./walk.js";

/** Where the limit readers report and what they default to. */
export interface LimitContext {
  /** Algorithm of limits that do not name one. */
  readonly defaultAlgorithm: Algorithm;
  /** Report at key `k` of `o` (or at `o` itself when `k` is undefined). */
  readonly problem: (o: CheckedObject, k: string | undefined, message: string) => void;
}

const str = (o: CheckedObject, k: string): string | undefined => {
  const v = o.values.get(k);
  return typeof v === "string" ? v : undefined;
};
const num = (o: CheckedObject, k: string): number | undefined => {
  const v = o.values.get(k);
  return typeof v === "number" ? v : undefined;
};
const obj = (o: CheckedObject, k: string): CheckedObject | undefined =>
  o.values.get(k) as CheckedObject | undefined;
const list = (o: CheckedObject, k: string): readonly CheckedObject[] =>
  (o.values.get(k) as readonly CheckedObject[] | undefined) ?? [];

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
  opts: { readonly required: boolean; readonly unlimited: boolean },
): ParsedLimits {
  const single = obj(o, "rate_limit");
  const many = o.valuePos.has("rate_limits") ? list(o, "rate_limits") : undefined;
  let complete = true;
  if (single !== undefined && many !== undefined) {
    ctx.problem(
      o,
      "rate_limits",
      'cannot be used together with "rate_limit" (put every limit in rate_limits)',
    );
    complete = false;
  }
  if (opts.required && single === undefined && many === undefined) {
    ctx.problem(o, undefined, 'needs "rate_limit" or "rate_limits"');
    complete = false;
  }
  if (many !== undefined && many.length === 0) {
    ctx.problem(o, "rate_limits", "must contain at least one limit");
    complete = false;
  }
  const limits: LimitSpec[] = [];
  const unlimited = opts.unlimited && single !== undefined && single.values.get("unlimited") === true;
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
  if (opts.unlimitedAllowed && l.values.get("unlimited") === true) {
    if (l.valuePos.has("unit")) ctx.problem(l, "unit", "should not be set when unlimited is true");
    if (l.valuePos.has("burst")) ctx.problem(l, "burst", "should not be set when unlimited is true");
    return undefined;
  }
  const hint = opts.unlimitedAllowed ? " (or set unlimited: true)" : "";
  for (const k of ["unit", "requests_per_unit"]) {
    if (!l.valuePos.has(k)) ctx.problem(l, undefined, `missing required key "${k}"${hint}`);
  }
  const algorithm = (str(l, "algorithm") as Algorithm | undefined) ?? ctx.defaultAlgorithm;
  if (algorithm === "fixed_window" && l.valuePos.has("burst")) {
    ctx.problem(l, "burst", "is not allowed with algorithm fixed_window (a window admits requests_per_unit)");
  }
  const unit = str(l, "unit") as Unit | undefined;
  const requestsPerUnit = num(l, "requests_per_unit");
  if (unit === undefined || requestsPerUnit === undefined) return undefined;
  return { name: str(l, "name"), unit, requestsPerUnit, algorithm, burst: num(l, "burst") };
}
