/**
 * The one validation path of a whole config: the descriptor rules, the `ext_authz`, `rlqs` and
 * `tiers` sections (with its tenants file) are read with the same options and either all succeed or
 * all their problems are reported. `tollgate serve` (every load and reload, from files or xDS),
 * `tollgate check` and `tollgate explain` all go through {@link loadServingConfig}, so one config
 * gets one verdict whichever command reads it.
 */
import type { ExtAuthzRules } from "../engine/extract/rules.js";
import type { RlqsRules } from "../engine/rlqs/types.js";
import type { Tiers } from "../engine/tiers.js";
import type { Algorithm, RuleSet } from "../engine/types.js";
import type { LoadResult, ParseOptions } from "./document.js";
import { FULL_SCHEMA } from "./full-schema.js";
import { extAuthzRulesOf } from "./sections/ext-authz.js";
import { rlqsRulesOf } from "./sections/rlqs.js";
import { loadTiers } from "./sections/tiers.js";

/** The settings that change what a config means or whether it is valid. */
export interface ValidationOptions {
  /** Algorithm of limits that do not name one (`--default-algorithm`, `--compat`). */
  readonly defaultAlgorithm: Algorithm;
  /** The tenants file of the `tiers` sections (`--tenants`); empty = none. */
  readonly tenantsPath: string;
  /** Longest ext_authz entry value in bytes (`--max-key-value-bytes`); runtime bound, not a verdict. */
  readonly maxKeyValueBytes: number;
}

/** Everything a config declares, compiled, ready to swap in as one reference. */
export interface ServingConfig {
  readonly load: LoadResult;
  readonly rules: RuleSet;
  readonly extAuthz: ExtAuthzRules;
  readonly tiers: Tiers;
  /** Per domain, its `rlqs` section (the RLQS stream service). */
  readonly rlqs: RlqsRules;
}

/** Reads and validates config documents (files, or resources from xDS) with the given parse options. */
export type DocumentReader = (opts: ParseOptions) => Promise<LoadResult>;

/**
 * Read the config through `read` and compile every section of it. Throws ConfigError with every
 * problem: the base config's first, then the sections', then the tenants file's.
 */
export async function loadServingConfig(
  read: DocumentReader,
  opts: ValidationOptions,
): Promise<ServingConfig> {
  const parse: ParseOptions = { defaultAlgorithm: opts.defaultAlgorithm, schema: FULL_SCHEMA };
  const load = await read(parse);
  const extAuthz = extAuthzRulesOf(load, { maxValueBytes: opts.maxKeyValueBytes });
  const rlqs = rlqsRulesOf(load);
  const tiers = await loadTiers(load, {
    defaultAlgorithm: opts.defaultAlgorithm,
    tenantsPath: opts.tenantsPath,
  });
  return Object.freeze({ load, rules: load.ruleSet, extAuthz, tiers, rlqs });
}
