/**
 * The settings that decide how a config is validated, taken the same way by `serve`, `check` and
 * `explain` (all three call {@link validationOptionsOf} on settings from the same loader).
 */
import type { ValidationOptions } from "./config/serving.js";
import type { SettingName, Settings } from "./settings.js";

/**
 * Settings that can change a config's verdict: the default algorithm (`burst` is refused under
 * fixed windows), `--compat` (which sets it) and the tenants file the `tiers` sections are read with.
 */
export const VALIDATION_SETTINGS: readonly SettingName[] = Object.freeze([
  "defaultAlgorithm",
  "compat",
  "tenants",
]);

/** The validation options of `settings`. */
export function validationOptionsOf(settings: Settings): ValidationOptions {
  return {
    defaultAlgorithm: settings.defaultAlgorithm,
    tenantsPath: settings.tenants,
    maxKeyValueBytes: settings.maxKeyValueBytes,
  };
}
