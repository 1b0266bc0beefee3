/**
 * Parse config texts with the `ext_authz` section enabled, for tests and tools that have no files:
 * the same validation as `loadConfig` + `extAuthzRulesOf`.
 */

import type { ExtAuthzRules } from "../../engine/extract/rules.js";
import { buildRuleSet, type LoadResult, type ParseOptions, readDocument } from "../document.js";
import type { ConfigProblem } from "../errors.js";
import { BASE_SCHEMA, extendSchema } from "../schema.js";
import { compileExtAuthz, type ExtAuthzCompileOptions } from "./ext-authz.js";
import { EXT_AUTHZ_SCHEMA_ROWS } from "./ext-authz-schema.js";

/** A config load with its ext_authz rules. */
export interface ExtAuthzLoadResult extends LoadResult {
  readonly extAuthz: ExtAuthzRules;
}

/** One config file's name and text. */
export interface ConfigText {
  readonly file: string;
  readonly text: string;
}

/** Parse config texts with the section enabled; throws ConfigError listing every problem of every file. */
export function parseExtAuthzConfigTexts(
  files: readonly ConfigText[],
  opts: ParseOptions & ExtAuthzCompileOptions = {},
): ExtAuthzLoadResult {
  const problems: ConfigProblem[] = [];
  const schema = extendSchema(opts.schema ?? BASE_SCHEMA, EXT_AUTHZ_SCHEMA_ROWS);
  const docs = files.map((f) => readDocument(f.file, f.text, { ...opts, schema }, problems));
  const extAuthz = compileExtAuthz(docs, problems, opts);
  return Object.freeze({ ...buildRuleSet(docs, problems), extAuthz });
}

/** Parse one config text with the section enabled; throws ConfigError listing every problem. */
export function parseExtAuthzConfigText(
  file: string,
  text: string,
  opts: ParseOptions & ExtAuthzCompileOptions = {},
): ExtAuthzLoadResult {
  return parseExtAuthzConfigTexts([{ file, text }], opts);
}
