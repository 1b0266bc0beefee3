/**
 * The `tiers` config section (docs/config.md, "Tiers"): per domain, limits per tier × route_class
 * and a default tier. Types, unknown keys and positions are the schema walker's job; this file
 * checks the rest (default tier defined, names unique, limits complete), reporting each problem with
 * file, line, column and YAML path, and compiles a frozen `TierTable` per domain.
 *
 * ```yaml
 * tiers:
 *   default_tier: free
 *   tiers:
 *     - name: free
 *       limits:
 *         - route_class: read
 *           rate_limit: { unit: minute, requests_per_unit: 100 }
 *         - rate_limit: { unit: minute, requests_per_unit: 20 }   # any other class
 * ```
 */

import { ruleLimitOf } from "../../engine/policy.js";
import type { TierLimits, Tiers, TierTable } from "../../engine/tiers.js";
import type { Algorithm, Rule } from "../../engine/types.js";
import type { LoadResult, ParsedDocument } from "../document.js";
import { ConfigError, type ConfigProblem } from "../errors.js";
import { child, has, items, type Row, text } from "../fields.js";
import { rulePlanOf } from "../hot-path.js";
import { type LimitContext, parseLimits } from "../limits.js";
import type { FieldDef } from "../schema.js";
import { loadTenants } from "../tenants.js";
import { type CheckedObject, childPath } from "../walk.js";

const T = "tiers";
const str = { kind: "string", nonEmpty: true } as const;
const LIMIT_CONTEXT = "rate_limits";

/** The section's rows by name. A limit reuses the `rate_limits` item fields (unit, requests_per_unit, …). */
const TIERS_ROWS = {
  section: { name: "tiers", in: ["root"], type: { kind: "object", context: T } },
  default_tier: { name: "default_tier", in: [T], type: str, required: true },
  tenant_key: { name: "tenant_key", in: [T], type: str },
  route_class_key: { name: "route_class_key", in: [T], type: str },
  tiers: { name: "tiers", in: [T], type: { kind: "list", context: `${T}_tier` }, required: true },
  name: { name: "name", in: [`${T}_tier`], type: str, required: true },
  limits: {
    name: "limits",
    in: [`${T}_tier`],
    type: { kind: "list", context: `${T}_limit` },
    required: true,
  },
  route_class: { name: "route_class", in: [`${T}_limit`], type: str },
  rate_limit: { name: "rate_limit", in: [`${T}_limit`], type: { kind: "object", context: LIMIT_CONTEXT } },
  rate_limits: { name: "rate_limits", in: [`${T}_limit`], type: { kind: "list", context: LIMIT_CONTEXT } },
} as const satisfies Record<string, FieldDef>;

/** Schema rows of the section (plugged into the config schema with `extendSchema`). */
export const TIERS_SCHEMA_ROWS: readonly FieldDef[] = Object.freeze(Object.values(TIERS_ROWS));

/** Metric-safe path segment. */
const segment = (s: string) => s.replace(/[^\w.*:/@+-]/g, "_");

interface Context extends LimitContext {
  readonly file: string;
  readonly domain: string;
  readonly problems: ConfigProblem[];
}

function problem(
  ctx: { readonly file: string; readonly problems: ConfigProblem[] },
  o: CheckedObject,
  k: string | undefined,
  message: string,
): void {
  const pos = (k === undefined ? undefined : o.valuePos.get(k)) ?? o.pos;
  const path = k === undefined ? o.path : childPath(o.path, k);
  ctx.problems.push({ file: ctx.file, line: pos.line, column: pos.column, path, message });
}

function nonEmpty(ctx: Context, o: CheckedObject, row: Row<typeof str>): string | undefined {
  const v = text(o, row);
  if (v === "") problem(ctx, o, row.name, "must not be empty");
  return v === "" ? undefined : v;
}

function rule(ctx: Context, item: CheckedObject, path: string): Rule | undefined {
  const parsed = parseLimits(item, ctx, { rows: TIERS_ROWS, required: true, unlimited: false });
  if (!parsed.complete || parsed.limits.length === 0) return undefined;
  const limits = parsed.limits.map(ruleLimitOf);
  return Object.freeze({
    domain: ctx.domain,
    path,
    limits: Object.freeze(limits),
    unlimited: false,
    shadowMode: false,
    quotaMode: false,
    detailedMetric: false,
    valueToMetric: false,
    replaces: Object.freeze([]),
    shards: 1,
    lease: undefined,
    onStoreError: undefined,
    source: Object.freeze({ file: ctx.file, line: item.pos.line }),
    plan: rulePlanOf(limits, 1),
  });
}

function tier(ctx: Context, t: CheckedObject, name: string): TierLimits {
  const byClass = new Map<string, Rule>();
  const lines = new Map<string, number>();
  let fallback: Rule | undefined;
  let fallbackLine = 0;
  const list = items(t, TIERS_ROWS.limits) ?? [];
  if (has(t, TIERS_ROWS.limits) && list.length === 0)
    problem(ctx, t, "limits", "must list at least one limit");
  for (const item of list) {
    const cls = text(item, TIERS_ROWS.route_class);
    if (cls === "") {
      problem(ctx, item, "route_class", "must not be empty (leave it out for the tier's other classes)");
      continue;
    }
    const first = cls === undefined ? fallbackLine : lines.get(cls);
    if (first !== undefined && first > 0) {
      const what = cls === undefined ? "limit without route_class" : `route_class "${cls}"`;
      problem(
        ctx,
        item,
        cls === undefined ? undefined : "route_class",
        `duplicate ${what} (first at line ${first})`,
      );
      continue;
    }
    const classPart = cls === undefined ? "" : `.route_class_${segment(cls)}`;
    const compiled = rule(ctx, item, `${ctx.domain}.tiers.${segment(name)}${classPart}`);
    if (cls === undefined) {
      fallbackLine = item.pos.line;
      fallback = compiled;
    } else {
      lines.set(cls, item.pos.line);
      if (compiled !== undefined) byClass.set(cls, compiled);
    }
  }
  return Object.freeze({ name, byClass, fallback });
}

function table(ctx: Context, section: CheckedObject): TierTable | undefined {
  const tiers = new Map<string, TierLimits>();
  const lines = new Map<string, number>();
  const list = items(section, TIERS_ROWS.tiers) ?? [];
  if (has(section, TIERS_ROWS.tiers) && list.length === 0)
    problem(ctx, section, "tiers", "must list at least one tier");
  for (const t of list) {
    const name = nonEmpty(ctx, t, TIERS_ROWS.name);
    if (name === undefined) continue;
    const first = lines.get(name);
    if (first !== undefined) {
      problem(ctx, t, "name", `duplicate tier "${name}" (first at line ${first})`);
      continue;
    }
    lines.set(name, t.pos.line);
    tiers.set(name, tier(ctx, t, name));
  }
  const defaultTier = nonEmpty(ctx, section, TIERS_ROWS.default_tier);
  if (defaultTier !== undefined && list.length > 0 && !lines.has(defaultTier)) {
    const known = [...lines.keys()].join(", ");
    problem(
      ctx,
      section,
      "default_tier",
      `names no tier of this section ("${defaultTier}"; defined: ${known})`,
    );
    return undefined;
  }
  if (defaultTier === undefined) return undefined;
  return Object.freeze({
    domain: ctx.domain,
    tenantKey: nonEmpty(ctx, section, TIERS_ROWS.tenant_key) ?? "tenant",
    classKey: nonEmpty(ctx, section, TIERS_ROWS.route_class_key) ?? "route_class",
    defaultTier,
    tiers,
  });
}

/** Options of {@link compileTiers}. */
export interface CompileTiersOptions {
  /** Algorithm of limits that do not name one (setting `--default-algorithm`). @default "gcra" */
  readonly defaultAlgorithm?: Algorithm;
}

/**
 * Check and compile the `tiers` section of every document, appending problems to `problems`.
 * @returns domain → its tier table (domains without the section are absent).
 */
export function compileTiers(
  documents: readonly ParsedDocument[],
  problems: ConfigProblem[],
  opts: CompileTiersOptions = {},
): Map<string, TierTable> {
  const tables = new Map<string, TierTable>();
  for (const doc of documents) {
    const section = doc.root === undefined ? undefined : child(doc.root, TIERS_ROWS.section);
    if (section === undefined || doc.domain === undefined) continue;
    const base = { file: doc.file, domain: doc.domain.domain, problems };
    const ctx: Context = {
      ...base,
      defaultAlgorithm: opts.defaultAlgorithm ?? "gcra",
      problem: (o, k, message) => problem(base, o, k, message),
    };
    const compiled = table(ctx, section);
    if (compiled !== undefined) tables.set(ctx.domain, compiled);
  }
  return tables;
}

/** Options of {@link loadTiers}. */
export interface LoadTiersOptions extends CompileTiersOptions {
  /** The tenants file (setting `--tenants`); empty = no tenants, every tenant gets the default tier. */
  readonly tenantsPath: string;
}

/**
 * Compile the `tiers` sections of a successful config load and read the tenants file against them.
 * Throws ConfigError with every problem (of the sections, else of the tenants file).
 */
export async function loadTiers(load: LoadResult, opts: LoadTiersOptions): Promise<Tiers> {
  const problems: ConfigProblem[] = [];
  const tables = compileTiers(load.documents, problems, opts);
  if (problems.length > 0) throw new ConfigError(problems);
  const knownTiers = new Set([...tables.values()].flatMap((t) => [...t.tiers.keys()]));
  const tenants = opts.tenantsPath === "" ? new Map() : await loadTenants(opts.tenantsPath, { knownTiers });
  return Object.freeze({ tables, tenants });
}

/**
 * `/rlconfig` lines of the tiers: one per domain (`edge.tiers: default_tier=free tenant_key=tenant
 * route_class_key=route_class tenants=200000`) and one per tier limit, in the listing's format
 * (`edge.tiers.gold.route_class_read: 100/minute burst 200 gcra name=read`), sorted.
 */
export function describeTiers(tiers: Tiers): string[] {
  const out: string[] = [];
  for (const t of tiers.tables.values()) {
    out.push(
      `${t.domain}.tiers: default_tier=${t.defaultTier} tenant_key=${t.tenantKey} route_class_key=${t.classKey} tenants=${tiers.tenants.size}`,
    );
    for (const tier of t.tiers.values()) {
      const rules = [...tier.byClass.values(), ...(tier.fallback === undefined ? [] : [tier.fallback])];
      for (const r of rules) {
        const limits = r.limits.map((l) => {
          const burst = l.policy.algorithm === "gcra" && l.policy.burst !== l.requestsPerUnit;
          const name = l.name === undefined ? "" : ` name=${l.name}`;
          return `${l.requestsPerUnit}/${l.unit}${burst ? ` burst ${l.policy.burst}` : ""} ${l.policy.algorithm}${name}`;
        });
        out.push(`${r.path}: ${limits.join(" + ")}`);
      }
    }
  }
  return out.sort();
}
