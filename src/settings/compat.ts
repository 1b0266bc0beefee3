/**
 * `--compat envoyproxy`: one setting that gives envoyproxy/ratelimit's numbers for an unchanged
 * config. It only fills in the settings that decide those numbers when they were not given (by flag,
 * `TOLLGATE_*` variable or the reference's own variable): fixed windows instead of GCRA, and no rate
 * limit headers. Everything else stays tollgate's; docs/migrating.md lists what still differs.
 */
import type { SettingName } from "../settings.js";

/** What `--compat envoyproxy` sets, when not given otherwise. */
export const ENVOYPROXY_COMPAT: ReadonlyMap<SettingName, string> = new Map<SettingName, string>([
  ["defaultAlgorithm", "fixed_window"],
  ["responseHeaders", "off"],
]);

/** The settings `--compat envoyproxy` fills, with their raw values: those of it not in `given`. */
export function compatFills(given: ReadonlySet<SettingName>): [SettingName, string][] {
  return [...ENVOYPROXY_COMPAT].filter(([name]) => !given.has(name));
}
