/**
 * The `ext_authz` section's schema rows: which keys exist where, and their types. Plugged into the
 * table-driven config schema; checks and compilation live in ext-authz.ts.
 */
import { BASE_SCHEMA, extendSchema, type FieldDef } from "../schema.js";

const str = { kind: "string" } as const;
const bool = { kind: "bool" } as const;
const E = "ext_authz";

/** The section's rows by name (contexts prefixed `ext_authz`); the checks read values through them. */
export const EXT_AUTHZ_ROWS = {
  section: { name: "ext_authz", in: ["root"], type: { kind: "object", context: E } },
  default: { name: "default", in: [E], type: bool },
  descriptors: {
    name: "descriptors",
    in: [E],
    type: { kind: "list", context: `${E}_descriptor` },
    required: true,
  },
  required: { name: "required", in: [`${E}_descriptor`], type: bool },
  entries: {
    name: "entries",
    in: [`${E}_descriptor`],
    type: { kind: "list", context: `${E}_entry` },
    required: true,
  },
  key: { name: "key", in: [`${E}_entry`], type: str, required: true },
  header: { name: "header", in: [`${E}_entry`], type: str },
  jwt_claim: { name: "jwt_claim", in: [`${E}_entry`], type: { kind: "object", context: `${E}_jwt_claim` } },
  source_ip: { name: "source_ip", in: [`${E}_entry`], type: bool },
  source_subnet: {
    name: "source_subnet",
    in: [`${E}_entry`],
    type: { kind: "object", context: `${E}_subnet` },
  },
  route_class: {
    name: "route_class",
    in: [`${E}_entry`],
    type: { kind: "object", context: `${E}_route_class` },
  },
  context_extension: { name: "context_extension", in: [`${E}_entry`], type: str },
  literal: { name: "literal", in: [`${E}_entry`], type: str },
  raw_path: { name: "raw_path", in: [`${E}_entry`], type: { kind: "object", context: `${E}_raw_path` } },
  claim: { name: "claim", in: [`${E}_jwt_claim`], type: str, required: true },
  claim_header: { name: "claim_header", in: [`${E}_jwt_claim`], type: str },
  payload_metadata: { name: "payload_metadata", in: [`${E}_jwt_claim`], type: str },
  metadata_namespace: { name: "metadata_namespace", in: [`${E}_jwt_claim`], type: str },
  token_header: { name: "token_header", in: [`${E}_jwt_claim`], type: str },
  decode_token: { name: "decode_token", in: [`${E}_jwt_claim`], type: bool },
  ipv4_prefix: { name: "ipv4_prefix", in: [`${E}_subnet`], type: { kind: "uint", min: 0, max: 32 } },
  ipv6_prefix: { name: "ipv6_prefix", in: [`${E}_subnet`], type: { kind: "uint", min: 0, max: 128 } },
  default_class: { name: "default", in: [`${E}_route_class`], type: str },
  routes: { name: "routes", in: [`${E}_route_class`], type: { kind: "list", context: `${E}_route` } },
  methods: { name: "methods", in: [`${E}_route`], type: str },
  prefix: { name: "prefix", in: [`${E}_route`], type: str },
  path: { name: "path", in: [`${E}_route`], type: str },
  class: { name: "class", in: [`${E}_route`], type: str, required: true },
  include_query: { name: "include_query", in: [`${E}_raw_path`], type: bool },
} as const satisfies Record<string, FieldDef>;

/** Schema rows of the section (contexts prefixed `ext_authz`). */
export const EXT_AUTHZ_SCHEMA_ROWS: readonly FieldDef[] = Object.freeze(Object.values(EXT_AUTHZ_ROWS));

/** The base schema plus this section: pass as `ParseOptions.schema` to `loadConfig`. */
export const EXT_AUTHZ_SCHEMA = extendSchema(BASE_SCHEMA, EXT_AUTHZ_SCHEMA_ROWS);
