/**
 * The config schema, table-driven: every key of the YAML format is declared once in a flat table
 * (`FieldDef`), naming its type and the contexts (object kinds) where it is allowed. The walker in
 * `walk.ts` derives the allowed-key set of each context from this table, so unknown keys, wrong
 * types and list items that are not maps are rejected in one place.
 *
 * Later sections (tiers, ext_authz) plug in by appending their own rows with `extendSchema` and
 * reading the validated values back from `LoadResult.documents`.
 */

/** The type of one field. `object` and `list` point at another context of the same schema. */
export type FieldType =
  | { readonly kind: "string"; readonly nonEmpty?: boolean }
  | { readonly kind: "bool" }
  | { readonly kind: "uint"; readonly min?: number; readonly max?: number }
  | { readonly kind: "enum"; readonly values: readonly string[]; readonly anyCase?: boolean }
  | { readonly kind: "duration" }
  | { readonly kind: "object"; readonly context: string }
  | { readonly kind: "list"; readonly context: string }
  /** Any mapping, kept as plain JSON (e.g. `metadata`). */
  | { readonly kind: "freeMap" };

/** One row of the schema table. */
export interface FieldDef {
  readonly name: string;
  /** Contexts (object kinds) where this key may appear, e.g. `root`, `descriptor`, `rate_limit`. */
  readonly in: readonly string[];
  readonly type: FieldType;
  /** Whether the key must be present in every object of those contexts. @default false */
  readonly required?: boolean;
}

/** A compiled schema: per context, the allowed fields by name. */
export interface ConfigSchema {
  readonly rows: readonly FieldDef[];
  readonly contexts: ReadonlyMap<string, ReadonlyMap<string, FieldDef>>;
}

/** Build a schema from table rows; a row repeated for the same context is a programming error. */
export function defineSchema(rows: readonly FieldDef[]): ConfigSchema {
  const contexts = new Map<string, Map<string, FieldDef>>();
  for (const row of rows) {
    for (const ctx of row.in) {
      let fields = contexts.get(ctx);
      if (fields === undefined) {
        fields = new Map();
        contexts.set(ctx, fields);
      }
      if (fields.has(row.name)) throw new Error(`schema: key "${row.name}" declared twice in "${ctx}"`);
      fields.set(row.name, row);
    }
  }
  return Object.freeze({ rows: Object.freeze([...rows]), contexts });
}

/** A new schema with extra rows (e.g. a `tiers` section at the root). */
export function extendSchema(base: ConfigSchema, rows: readonly FieldDef[]): ConfigSchema {
  return defineSchema([...base.rows, ...rows]);
}

const UINT32_MAX = 4_294_967_295;
const uint32 = { kind: "uint", min: 0, max: UINT32_MAX } as const;
const bool = { kind: "bool" } as const;
const name = { kind: "string" } as const;
/** Accepted spellings of `unit` (any case). */
export const UNITS = ["second", "minute", "hour", "day", "week", "month", "year"] as const;
/** Accepted `algorithm` values. */
export const ALGORITHMS = ["gcra", "fixed_window"] as const;
/** Accepted `on_store_error` values. */
export const FAILURE_POLICIES = ["local", "allow", "deny", "error"] as const;
const LIMIT = ["rate_limit", "rate_limits"] as const;
/** Largest `max_debt` in hits: Envoy's bound on one `hits_addend` (the codec's `MAX_HITS_ADDEND`). */
export const MAX_DEBT_HITS = 1_000_000_000;

/**
 * The rows of the tollgate format by name: envoyproxy/ratelimit's keys unchanged, plus our
 * extensions (`algorithm`, `burst`, `rate_limits`, `shards`, `lease`, `on_store_error`, `overdraft`,
 * `max_debt`). Each row keeps its literal type, so the readers in `fields.ts` give the value its
 * TypeScript type.
 */
export const ROWS = {
  domain: { name: "domain", in: ["root"], type: { kind: "string" }, required: true },
  descriptors: {
    name: "descriptors",
    in: ["root", "descriptor"],
    type: { kind: "list", context: "descriptor" },
  },
  on_store_error: {
    name: "on_store_error",
    in: ["root", "descriptor"],
    type: { kind: "enum", values: FAILURE_POLICIES },
  },
  key: { name: "key", in: ["descriptor"], type: { kind: "string" }, required: true },
  value: { name: "value", in: ["descriptor"], type: { kind: "string" } },
  rate_limit: { name: "rate_limit", in: ["descriptor"], type: { kind: "object", context: "rate_limit" } },
  rate_limits: { name: "rate_limits", in: ["descriptor"], type: { kind: "list", context: "rate_limits" } },
  shadow_mode: { name: "shadow_mode", in: ["descriptor"], type: bool },
  overdraft: { name: "overdraft", in: ["descriptor"], type: bool },
  max_debt: { name: "max_debt", in: ["descriptor"], type: { kind: "uint", min: 0, max: MAX_DEBT_HITS } },
  quota_mode: { name: "quota_mode", in: ["descriptor"], type: bool },
  detailed_metric: { name: "detailed_metric", in: ["descriptor"], type: bool },
  value_to_metric: { name: "value_to_metric", in: ["descriptor"], type: bool },
  share_threshold: { name: "share_threshold", in: ["descriptor"], type: bool },
  metadata: { name: "metadata", in: ["descriptor"], type: { kind: "freeMap" } },
  shards: { name: "shards", in: ["descriptor"], type: { kind: "uint", min: 1, max: 64 } },
  lease: { name: "lease", in: ["descriptor"], type: { kind: "object", context: "lease" } },
  calendar: { name: "calendar", in: ["descriptor"], type: bool },
  time_zone: { name: "time_zone", in: ["descriptor"], type: { kind: "string" } },
  unit: { name: "unit", in: LIMIT, type: { kind: "enum", values: UNITS, anyCase: true } },
  requests_per_unit: { name: "requests_per_unit", in: LIMIT, type: uint32 },
  name: { name: "name", in: LIMIT, type: name },
  algorithm: { name: "algorithm", in: LIMIT, type: { kind: "enum", values: ALGORITHMS } },
  burst: { name: "burst", in: LIMIT, type: { kind: "uint", min: 1, max: UINT32_MAX } },
  unlimited: { name: "unlimited", in: ["rate_limit"], type: bool },
  replaces: { name: "replaces", in: ["rate_limit"], type: { kind: "list", context: "replaces" } },
  replaces_name: { name: "name", in: ["replaces"], type: name, required: true },
  size: { name: "size", in: ["lease"], type: { kind: "uint", min: 1, max: UINT32_MAX }, required: true },
  ttl: { name: "ttl", in: ["lease"], type: { kind: "duration" }, required: true },
} as const satisfies Record<string, FieldDef>;

/** The tollgate format (the rows of {@link ROWS}, in order). */
export const BASE_SCHEMA: ConfigSchema = defineSchema(Object.values(ROWS));
