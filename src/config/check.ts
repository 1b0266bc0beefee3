/**
 * Semantic checks on a schema-validated document (the rules beyond types that envoyproxy/ratelimit
 * enforces, plus those of our extensions), producing the typed `DomainSpec`.
 */
import { CALENDAR_UNITS, isTimeZone } from "../engine/calendar.js";
import type { Algorithm, LeaseOptions } from "../engine/types.js";
import { MAX_DEBT_DAYS, maxDebtCap } from "./debt.js";
import { child, choice, count, flag, freeMap, has, items, text } from "./fields.js";
import { type LimitContext, parseLimits } from "./limits.js";
import { ROWS } from "./schema.js";
import type { DescriptorSpec, DomainSpec, LimitSpec } from "./spec.js";
import { type CheckedObject, childPath, type Pos, type ProblemSink } from "./walk.js";

/** Options of the semantic checks. */
export interface CheckOptions {
  readonly file: string;
  /** Algorithm of limits that do not name one. @default "gcra" */
  readonly defaultAlgorithm?: Algorithm;
  readonly report: ProblemSink;
}

class Checker {
  readonly #opts: CheckOptions;
  readonly #limitContext: LimitContext;
  constructor(opts: CheckOptions) {
    this.#opts = opts;
    this.#limitContext = {
      defaultAlgorithm: opts.defaultAlgorithm ?? "gcra",
      problem: (o, k, message) => this.problem(o, k, message),
    };
  }

  /** Report at key `k` of `o` (or at `o` itself when `k` is undefined). */
  problem(o: CheckedObject, k: string | undefined, message: string): void {
    const pos: Pos = (k === undefined ? undefined : o.valuePos.get(k)) ?? o.pos;
    this.#opts.report(pos, k === undefined ? o.path : childPath(o.path, k), message);
  }

  domain(root: CheckedObject): DomainSpec | undefined {
    const domain = text(root, ROWS.domain);
    if (domain === "") this.problem(root, "domain", "must not be empty");
    const descriptors = this.level(items(root, ROWS.descriptors) ?? [], domain ?? "");
    if (domain === undefined || domain === "") return undefined;
    const at = root.valuePos.get("domain") ?? root.pos;
    return {
      domain,
      file: this.#opts.file,
      line: at.line,
      column: at.column,
      onStoreError: choice(root, ROWS.on_store_error),
      descriptors,
    };
  }

  level(items: readonly CheckedObject[], parentKey: string): DescriptorSpec[] {
    const seen = new Map<string, number>();
    const out: DescriptorSpec[] = [];
    for (const item of items) {
      const spec = this.descriptor(item, parentKey);
      if (spec === undefined) continue;
      const composite = spec.value === undefined ? spec.key : `${spec.key}_${spec.value}`;
      const identity = JSON.stringify([spec.key, spec.value ?? null]);
      const first = seen.get(identity);
      if (first !== undefined) {
        const full = parentKey === "" ? composite : `${parentKey}.${composite}`;
        this.problem(
          item,
          "key",
          `duplicate descriptor composite key "${full}" (first defined at line ${first})`,
        );
        continue;
      }
      seen.set(identity, spec.line);
      out.push(spec);
    }
    return out;
  }

  descriptor(d: CheckedObject, parentKey: string): DescriptorSpec | undefined {
    const key = text(d, ROWS.key);
    if (key === "") this.problem(d, "key", "descriptor has empty key");
    const rawValue = text(d, ROWS.value);
    const value = rawValue === "" ? undefined : rawValue;
    const parsed = parseLimits(d, this.#limitContext, { rows: ROWS, required: false, unlimited: true });
    const rateLimit = parsed.single;
    const hasRule = parsed.hasRule;
    if (flag(d, ROWS.share_threshold) && (value === undefined || !value.includes("*"))) {
      this.problem(d, "share_threshold", 'requires a value containing "*" (a wildcard value)');
    }
    for (const row of [ROWS.shards, ROWS.lease, ROWS.overdraft]) {
      if (has(d, row) && !hasRule)
        this.problem(d, row.name, 'requires "rate_limit" or "rate_limits" on the same descriptor');
    }
    this.overdraft(d, rateLimit !== undefined && flag(rateLimit, ROWS.unlimited));
    const composite = value === undefined ? (key ?? "") : `${key}_${value}`;
    const children = this.level(
      items(d, ROWS.descriptors) ?? [],
      parentKey === "" ? composite : `${parentKey}.${composite}`,
    );
    const replaces = rateLimit === undefined ? [] : this.replaces(rateLimit);
    this.checkMaxDebt(d, parsed.limits);
    const lease = child(d, ROWS.lease);
    if (key === undefined || key === "") return undefined;
    return {
      key,
      value,
      line: d.pos.line,
      hasRule,
      limits: parsed.limits,
      unlimited: rateLimit !== undefined && flag(rateLimit, ROWS.unlimited),
      replaces,
      shadowMode: flag(d, ROWS.shadow_mode),
      calendar: this.calendar(d, parsed.limits, lease !== undefined),
      overdraft: flag(d, ROWS.overdraft),
      maxDebt: count(d, ROWS.max_debt),
      quotaMode: flag(d, ROWS.quota_mode),
      detailedMetric: flag(d, ROWS.detailed_metric),
      valueToMetric: flag(d, ROWS.value_to_metric),
      shareThreshold: flag(d, ROWS.share_threshold),
      shards: count(d, ROWS.shards) ?? 1,
      lease: lease === undefined ? undefined : this.lease(lease),
      onStoreError: choice(d, ROWS.on_store_error),
      metadata: freeMap(d, ROWS.metadata),
      children,
    };
  }

  /** `overdraft` and `max_debt`: what they combine with (limits: see {@link checkMaxDebt}). */
  overdraft(d: CheckedObject, unlimited: boolean): void {
    const on = flag(d, ROWS.overdraft);
    if (has(d, ROWS.max_debt) && !on) this.problem(d, "max_debt", 'requires "overdraft: true"');
    if (!on) return;
    if ((count(d, ROWS.shards) ?? 1) > 1)
      this.problem(d, "overdraft", 'cannot be used with "shards" (a debt belongs to one bucket)');
    if (unlimited) this.problem(d, "overdraft", "has no effect on an unlimited rate_limit");
  }

  /** A `max_debt` repaid in more than a year by one of the limits (the cap of `maxDebtOf`). */
  checkMaxDebt(d: CheckedObject, limits: readonly LimitSpec[]): void {
    const maxDebt = count(d, ROWS.max_debt);
    if (!flag(d, ROWS.overdraft) || maxDebt === undefined) return;
    for (const l of limits) {
      const cap = maxDebtCap(l);
      if (maxDebt > cap)
        this.problem(
          d,
          "max_debt",
          `${maxDebt} hits take more than ${MAX_DEBT_DAYS} days to repay at ${l.requestsPerUnit} per ${l.unit} (at most ${cap})`,
        );
    }
  }

  /**
   * `calendar` / `time_zone` of a descriptor: calendar windows need fixed_window limits of unit day,
   * week, month or year, no lease, and a time zone this Node.js knows.
   */
  calendar(
    d: CheckedObject,
    limits: readonly LimitSpec[],
    leased: boolean,
  ): { readonly timeZone: string } | undefined {
    const timeZone = text(d, ROWS.time_zone);
    if (!flag(d, ROWS.calendar)) {
      if (timeZone !== undefined)
        this.problem(d, "time_zone", "requires calendar: true on the same descriptor");
      return undefined;
    }
    if (limits.length === 0 && !has(d, ROWS.rate_limit) && !has(d, ROWS.rate_limits))
      this.problem(d, "calendar", 'requires "rate_limit" or "rate_limits" on the same descriptor');
    for (const l of limits) {
      if (l.algorithm !== "fixed_window" || !(CALENDAR_UNITS as readonly string[]).includes(l.unit)) {
        this.problem(
          d,
          "calendar",
          `requires algorithm fixed_window and unit day, week, month or year (got ${l.algorithm} per ${l.unit})`,
        );
        break;
      }
    }
    if (leased) this.problem(d, "calendar", "cannot be used together with lease");
    if (timeZone !== undefined && !isTimeZone(timeZone)) {
      this.problem(
        d,
        "time_zone",
        `unknown time zone "${timeZone}" (use an IANA name such as UTC or Europe/Berlin)`,
      );
      return undefined;
    }
    return { timeZone: timeZone ?? "UTC" };
  }

  replaces(l: CheckedObject): string[] {
    const own = text(l, ROWS.name);
    const names: string[] = [];
    for (const r of items(l, ROWS.replaces) ?? []) {
      const name = text(r, ROWS.replaces_name);
      if (name === undefined) continue;
      if (name === "") this.problem(r, "name", "should not be empty");
      else if (name === own) this.problem(r, "name", `should not name its own rate limit "${own}"`);
      else names.push(name);
    }
    return names;
  }

  lease(l: CheckedObject): LeaseOptions | undefined {
    const size = count(l, ROWS.size);
    const ttlMs = count(l, ROWS.ttl);
    return size === undefined || ttlMs === undefined ? undefined : { size, ttlMs };
  }
}

/** Check one schema-validated document; undefined when it has no usable domain (problems reported). */
export function checkDocument(root: CheckedObject, opts: CheckOptions): DomainSpec | undefined {
  return new Checker(opts).domain(root);
}
