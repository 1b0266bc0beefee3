/**
 * The schema of a complete tollgate config: the envoyproxy/ratelimit format with our extensions,
 * plus the `ext_authz` and `tiers` sections. `serve`, `check` and `explain` validate against it.
 */
import { extendSchema } from "./schema.js";
import { EXT_AUTHZ_SCHEMA } from "./sections/ext-authz.js";
import { TIERS_SCHEMA_ROWS } from "./sections/tiers.js";

export const FULL_SCHEMA = extendSchema(EXT_AUTHZ_SCHEMA, TIERS_SCHEMA_ROWS);
