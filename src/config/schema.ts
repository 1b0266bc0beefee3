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
const uint32: FieldType = { kind: "uint", min: 0, max: UINT32_MAX };
const bool: FieldType = { kind: "bool" };
const name: FieldType = { kind: "string" };
/** Accepted spellings of `unit` (any case). */
export const UNITS = ["second", "minute", "hour", "day", "week", "month", "year"] as const;
/** Accepted `algorithm` values. */
export const ALGORITHMS = ["gcra", "fixed_window"] as const;
/** Accepted `on_store_error` values. */
export const FAILURE_POLICIES = ["local", "allow", "deny", "error"] as const;
const LIMIT = ["rate_limit", "rate_limits"];

/**
 * The tollgate format: envoyproxy/ratelimit's keys unchanged, plus our extensions
 * (`algorithm`, `burst`, `rate_limits`, `shards`, `lease`, `on_store_error`).
 */
export const BASE_SCHEMA: ConfigSchema = defineSchema([
  { name: "domain", in: ["root"], type: { kind: "string" }, required: true },
  { name: "descriptors", in: ["root", "descriptor"], type: { kind: "list", context: "descriptor" } },
  {
    name: "on_store_error",
    in: ["root", "descriptor"],
    type: { kind: "enum", values: FAILURE_POLICIES },
  },
  { name: "key", in: ["descriptor"], type: { kind: "string" }, required: true },
  { name: "value", in: ["descriptor"], type: { kind: "string" } },
  { name: "rate_limit", in: ["descriptor"], type: { kind: "object", context: "rate_limit" } },
  { name: "rate_limits", in: ["descriptor"], type: { kind: "list", context: "rate_limits" } },
  { name: "shadow_mode", in: ["descriptor"], type: bool },
  { name: "quota_mode", in: ["descriptor"], type: bool },
  { name: "detailed_metric", in: ["descriptor"], type: bool },
  { name: "value_to_metric", in: ["descriptor"], type: bool },
  { name: "share_threshold", in: ["descriptor"], type: bool },
  { name: "metadata", in: ["descriptor"], type: { kind: "freeMap" } },
  { name: "shards", in: ["descriptor"], type: { kind: "uint", min: 1, max: 64 } },
  { name: "lease", in: ["descriptor"], type: { kind: "object", context: "lease" } },
  { name: "calendar", in: ["descriptor"], type: bool },
  { name: "time_zone", in: ["descriptor"], type: { kind: "string" } },
  { name: "unit", in: LIMIT, type: { kind: "enum", values: UNITS, anyCase: true } },
  { name: "requests_per_unit", in: LIMIT, type: uint32 },
  { name: "name", in: LIMIT, type: name },
  { name: "algorithm", in: LIMIT, type: { kind: "enum", values: ALGORITHMS } },
  { name: "burst", in: LIMIT, type: { kind: "uint", min: 1, max: UINT32_MAX } },
  { name: "unlimited", in: ["rate_limit"], type: bool },
  { name: "replaces", in: ["rate_limit"], type: { kind: "list", context: "replaces" } },
  { name: "name", in: ["replaces"], type: name, required: true },
  { name: "size", in: ["lease"], type: { kind: "uint", min: 1, max: UINT32_MAX }, required: true },
  { name: "ttl", in: ["lease"], type: { kind: "duration" }, required: true },
]);
