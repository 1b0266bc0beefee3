/**
 * Loads the one settings schema (src/settings-schema.ts): each setting has a flag, a `TOLLGATE_*` environment twin, a type, a default and a
 * unit. The README's settings table is rendered from this schema (`npm run docs:settings`) and a test keeps
 * the two in sync. Precedence: flag, then environment, then default.
 */

import { SETTINGS, type Spec } from "./settings-schema.js";

export { SETTINGS };

export type SettingName = keyof typeof SETTINGS;

type ValueOf<S> =
  S extends Spec<infer K>
    ? K extends "int" | "duration"
      ? number
      : K extends "bool"
        ? boolean
        : K extends "addr"
          ? { host: string; port: number }
          : string
    : never;

/** Parsed, validated settings. Durations are milliseconds. */
export type Settings = { readonly [N in SettingName]: ValueOf<(typeof SETTINGS)[N]> };

/** A bad flag, env var or value; the message names the setting and the fix. */
export class SettingsError extends Error {
  override readonly name = "SettingsError";
}

const DURATION = /^(\d+(?:\.\d+)?)(ms|s|m|h)$/;
const DURATION_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** Parse `250ms`, `5s`, `1m`, `2h` into milliseconds. */
export function parseDuration(text: string): number | undefined {
  const m = DURATION.exec(text.trim());
  if (!m?.[1] || !m[2]) return undefined;
  return Math.round(Number(m[1]) * (DURATION_MS[m[2]] ?? 1));
}

function parseValue(name: string, s: Spec, raw: string, from: string): unknown {
  const bad = (why: string) => new SettingsError(`${from}: ${why} (got ${JSON.stringify(raw)}) — ${s.doc}`);
  switch (s.kind) {
    case "string":
      return raw;
    case "int": {
      if (!/^\d+$/.test(raw)) throw bad("expected a whole number");
      const n = Number(raw);
      if (s.min !== undefined && n < s.min) throw bad(`must be at least ${s.min}`);
      if (s.max !== undefined && n > s.max) throw bad(`must be at most ${s.max}`);
      return n;
    }
    case "bool":
      if (["true", "1", "yes", "on"].includes(raw.toLowerCase())) return true;
      if (["false", "0", "no", "off", ""].includes(raw.toLowerCase())) return false;
      throw bad("expected true or false");
    case "duration": {
      const ms = parseDuration(raw);
      if (ms === undefined) throw bad("expected a duration such as 250ms, 5s, 1m");
      if (s.min !== undefined && ms < s.min) throw bad(`must be at least ${s.min} ms`);
      return ms;
    }
    case "enum":
      if (!s.values?.includes(raw)) throw bad(`expected one of ${s.values?.join(", ")}`);
      return raw;
    case "addr": {
      const m = /^(.*):(\d+)$/.exec(raw);
      const port = Number(m?.[2]);
      if (!m || port > 65535) throw bad("expected HOST:PORT");
      return { host: (m[1] ?? "").replace(/^\[(.*)\]$/, "$1") || "0.0.0.0", port };
    }
  }
  throw new SettingsError(`setting ${name} has an unknown kind`);
}

/**
 * Build Settings from command-line flags (`--name value` or `--name=value`, booleans may omit the value)
 * and the environment. Unknown flags are an error naming the closest known one.
 */
export function loadSettings(argv: readonly string[], env: NodeJS.ProcessEnv = process.env): Settings {
  const byFlag = new Map<string, SettingName>();
  for (const [name, s] of Object.entries(SETTINGS)) byFlag.set(s.flag, name as SettingName);
  const fromFlags = new Map<SettingName, string>();
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? "";
    const eq = arg.indexOf("=");
    const flag = eq > 0 ? arg.slice(0, eq) : arg;
    const name = byFlag.get(flag);
    if (!name) {
      const known = [...byFlag.keys()].filter((f) => f.startsWith(flag.slice(0, 5)));
      throw new SettingsError(
        `unknown option ${flag}${known.length ? ` (did you mean ${known.join(", ")}?)` : ""}`,
      );
    }
    if (eq > 0) fromFlags.set(name, arg.slice(eq + 1));
    else if (SETTINGS[name].kind === "bool" && (argv[i + 1] === undefined || argv[i + 1]?.startsWith("--")))
      fromFlags.set(name, "true");
    else {
      const next = argv[++i];
      if (next === undefined) throw new SettingsError(`${flag} needs a value — ${SETTINGS[name].doc}`);
      fromFlags.set(name, next);
    }
  }
  const out: Record<string, unknown> = {};
  for (const [name, s] of Object.entries(SETTINGS) as [SettingName, Spec][]) {
    const flagValue = fromFlags.get(name);
    const envValue = env[s.env];
    if (flagValue !== undefined) out[name] = parseValue(name, s, flagValue, s.flag);
    else if (envValue !== undefined) out[name] = parseValue(name, s, envValue, s.env);
    else out[name] = parseValue(name, s, s.default, `default of ${s.flag}`);
  }
  return Object.freeze(out) as Settings;
}

/** The README settings table, rendered from the schema. */
export function renderSettingsTable(): string {
  const rows = Object.values(SETTINGS).map((s: Spec) => {
    const def = s.default === "" ? '`""`' : `\`${s.default}\``;
    const values = s.values ? ` One of ${s.values.map((v) => `\`${v}\``).join(", ")}.` : "";
    return `| \`${s.flag}\` | \`${s.env}\` | ${def} | ${s.unit ?? ""} | ${s.doc}${values} |`;
  });
  return [
    "| flag | environment | default | unit | meaning |",
    "| --- | --- | --- | --- | --- |",
    ...rows,
  ].join("\n");
}
