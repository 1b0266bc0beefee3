/**
 * The `ext_authz` section's schema rows: which keys exist where, and their types. Plugged into the
 * table-driven config schema; checks and compilation live in ext-authz.ts.
 */
import { BASE_SCHEMA, extendSchema, type FieldDef } from "../schema.js";

const str = { kind: "string" } as const;
const bool = { kind: "bool" } as const;
const E = "ext_authz";

/** Schema rows of the section (contexts prefixed `ext_authz`). */
export const EXT_AUTHZ_SCHEMA_ROWS: readonly FieldDef[] = Object.freeze([
  { name: "ext_authz", in: ["root"], type: { kind: "object", context: E } },
  { name: "default", in: [E], type: bool },
  { name: "descriptors", in: [E], type: { kind: "list", context: `${E}_descriptor` }, required: true },
  { name: "required", in: [`${E}_descriptor`], type: bool },
  { name: "entries", in: [`${E}_descriptor`], type: { kind: "list", context: `${E}_entry` }, required: true },
  { name: "key", in: [`${E}_entry`], type: str, required: true },
  { name: "header", in: [`${E}_entry`], type: str },
  { name: "jwt_claim", in: [`${E}_entry`], type: { kind: "object", context: `${E}_jwt_claim` } },
  { name: "source_ip", in: [`${E}_entry`], type: bool },
  { name: "source_subnet", in: [`${E}_entry`], type: { kind: "object", context: `${E}_subnet` } },
  { name: "route_class", in: [`${E}_entry`], type: { kind: "object", context: `${E}_route_class` } },
  { name: "context_extension", in: [`${E}_entry`], type: str },
  { name: "literal", in: [`${E}_entry`], type: str },
  { name: "raw_path", in: [`${E}_entry`], type: { kind: "object", context: `${E}_raw_path` } },
  { name: "claim", in: [`${E}_jwt_claim`], type: str, required: true },
  { name: "claim_header", in: [`${E}_jwt_claim`], type: str },
  { name: "payload_metadata", in: [`${E}_jwt_claim`], type: str },
  { name: "metadata_namespace", in: [`${E}_jwt_claim`], type: str },
  { name: "token_header", in: [`${E}_jwt_claim`], type: str },
  { name: "decode_token", in: [`${E}_jwt_claim`], type: bool },
  { name: "ipv4_prefix", in: [`${E}_subnet`], type: { kind: "uint", min: 0, max: 32 } },
  { name: "ipv6_prefix", in: [`${E}_subnet`], type: { kind: "uint", min: 0, max: 128 } },
  { name: "default", in: [`${E}_route_class`], type: str },
  { name: "routes", in: [`${E}_route_class`], type: { kind: "list", context: `${E}_route` } },
  { name: "methods", in: [`${E}_route`], type: str },
  { name: "prefix", in: [`${E}_route`], type: str },
  { name: "path", in: [`${E}_route`], type: str },
  { name: "class", in: [`${E}_route`], type: str, required: true },
  { name: "include_query", in: [`${E}_raw_path`], type: bool },
]);

/** The base schema plus this section: pass as `ParseOptions.schema` to `loadConfig`. */
export const EXT_AUTHZ_SCHEMA = extendSchema(BASE_SCHEMA, EXT_AUTHZ_SCHEMA_ROWS);
