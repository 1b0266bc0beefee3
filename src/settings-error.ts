/** A bad flag, env var or value; the message names the setting and the fix. */
export class SettingsError extends Error {
  override readonly name = "SettingsError";
}
