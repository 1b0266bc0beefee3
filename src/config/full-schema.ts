/**
 * The schema of a complete tollgate config: the envoyproxy/ratelimit format with our extensions,
 * plus the `ext_authz`, `tiers` and `rlqs` sections. `serve`, `check` and `explain` validate against it.
 */
import { extendSchema } from "./schema.js";
import { EXT_AUTHZ_SCHEMA } from "./sections/ext-authz.js";
import { RLQS_SCHEMA_ROWS } from "./sections/rlqs.js";
import { TIERS_SCHEMA_ROWS } from "./sections/tiers.js";

export const FULL_SCHEMA = extendSchema(EXT_AUTHZ_SCHEMA, [...TIERS_SCHEMA_ROWS, ...RLQS_SCHEMA_ROWS]);
