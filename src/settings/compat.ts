/**
 * `--compat envoyproxy`: one setting that gives envoyproxy/ratelimit's numbers for an unchanged
 * config. It only fills in the settings that decide those numbers when they were not given (by flag,
 * `TOLLGATE_*` variable or the reference's own variable): fixed windows instead of GCRA, and no rate
 * limit headers. Everything else stays tollgate's; docs/migrating.md lists what still differs.
 */
import type { SettingName } from "../settings.js";

/** What `--compat envoyproxy` sets, when not given otherwise. */
export const ENVOYPROXY_COMPAT: Readonly<Partial<Record<SettingName, string>>> = Object.freeze({
  defaultAlgorithm: "fixed_window",
  responseHeaders: "off",
});

/** Fill the compat mode's settings into `out`, except those in `given`. */
export function applyCompat(out: Record<string, unknown>, given: ReadonlySet<SettingName>): void {
  if (out.compat !== "envoyproxy") return;
  for (const [name, value] of Object.entries(ENVOYPROXY_COMPAT) as [SettingName, string][]) {
    if (!given.has(name)) out[name] = value;
  }
}
