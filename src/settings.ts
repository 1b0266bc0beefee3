/**
 * Loads the one settings schema (src/settings-schema.ts): each setting has a flag, a `TOLLGATE_*` environment twin, a type, a default and a
 * unit. The README's settings table is rendered from this schema (`npm run docs:settings`) and a test keeps
 * the two in sync. Precedence: flag, then environment, then default.
 */

import { compatFills } from "./settings/compat.js";
import { readReferenceEnv } from "./settings/envoyproxy-env.js";
import { emptyReport, type ReferenceEnvReport, shadowed } from "./settings/report.js";
import { SettingsError } from "./settings-error.js";
import { SETTINGS, type Spec } from "./settings-schema.js";

export { SETTINGS };
export type { ReferenceEnvReport };

export type SettingName = keyof typeof SETTINGS;

/** The parsed value of one setting: an `enum` is the union of its schema's `values`. */
type ValueOf<S> =
  S extends Spec<infer K, infer V>
    ? K extends "int" | "duration"
      ? number
      : K extends "bool"
        ? boolean
        : K extends "addr"
          ? { host: string; port: number }
          : K extends "enum"
            ? V[number]
            : string
    : never;

/** Parsed, validated settings. Durations are milliseconds. */
export type Settings = { readonly [N in SettingName]: ValueOf<(typeof SETTINGS)[N]> };

export { SettingsError };

const DURATION = /^(\d+(?:\.\d+)?)(ms|s|m|h)$/;
const DURATION_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** Parse `250ms`, `5s`, `1m`, `2h` into milliseconds. */
export function parseDuration(text: string): number | undefined {
  const m = DURATION.exec(text.trim());
  if (!m?.[1] || !m[2]) return undefined;
  return Math.round(Number(m[1]) * (DURATION_MS[m[2]] ?? 1));
}

function addrOf(raw: string): { host: string; port: number } | undefined {
  const m = /^(.*):(\d+)$/.exec(raw);
  const port = Number(m?.[2]);
  if (!m || port > 65535) return undefined;
  return { host: (m[1] ?? "").replace(/^\[(.*)\]$/, "$1") || "0.0.0.0", port };
}

/** A `HOST:PORT` string setting (`--debug-addr`, `--xds-server`); throws SettingsError naming `what`. */
export function parseAddr(raw: string, what: string): { host: string; port: number } {
  const addr = addrOf(raw);
  if (addr === undefined) throw new SettingsError(`${what}: expected HOST:PORT (got ${JSON.stringify(raw)})`);
  return addr;
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
      const addr = addrOf(raw);
      if (addr === undefined) throw bad("expected HOST:PORT");
      return addr;
    }
  }
  throw new SettingsError(`setting ${name} has an unknown kind`);
}

/** Flag values by setting, from `--name value` / `--name=value` (a bare boolean flag is true). */
function parseFlags(argv: readonly string[]): Map<SettingName, string> {
  const byFlag = new Map<string, SettingName>();
  for (const name of SETTING_NAMES) {
    const s: Spec = SETTINGS[name];
    for (const alias of s.deprecatedAliases ?? []) byFlag.set(alias.flag, name);
    byFlag.set(s.flag, name);
  }
  const fromFlags = new Map<SettingName, string>();
  const byCurrentFlag = new Set<SettingName>();
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
    let value: string;
    if (eq > 0) value = arg.slice(eq + 1);
    else if (SETTINGS[name].kind === "bool" && (argv[i + 1] === undefined || argv[i + 1]?.startsWith("--")))
      value = "true";
    else {
      const next = argv[++i];
      if (next === undefined) throw new SettingsError(`${flag} needs a value — ${SETTINGS[name].doc}`);
      value = next;
    }
    // The current flag wins over a deprecated alias of it, whatever their order.
    const current = flag === SETTINGS[name].flag;
    if (current || !byCurrentFlag.has(name)) fromFlags.set(name, value);
    if (current) byCurrentFlag.add(name);
  }
  return fromFlags;
}

/** The value of the first deprecated alias variable of `s` that is set. */
function aliasEnv(s: Spec, env: NodeJS.ProcessEnv): string | undefined {
  for (const alias of s.deprecatedAliases ?? []) if (env[alias.env] !== undefined) return env[alias.env];
  return undefined;
}

/** Settings and where the envoyproxy/ratelimit environment went (for the startup log line). */
export interface ResolvedSettings {
  readonly settings: Settings;
  readonly referenceEnv: ReferenceEnvReport;
}

/** Every setting's name, in schema order. */
export const SETTING_NAMES: readonly SettingName[] = Object.freeze(
  Object.keys(SETTINGS).filter((n): n is SettingName => Object.hasOwn(SETTINGS, n)),
);

/** Whether `v` has the type of setting `name` (what parseValue returns for its kind). */
function fits<N extends SettingName>(name: N, v: unknown): v is Settings[N] {
  const s: Spec = SETTINGS[name];
  switch (s.kind) {
    case "int":
    case "duration":
      return typeof v === "number";
    case "bool":
      return typeof v === "boolean";
    case "enum":
      return typeof v === "string" && (s.values?.includes(v) ?? false);
    case "addr":
      return typeof v === "object" && v !== null && "host" in v && "port" in v;
    case "string":
      return typeof v === "string";
  }
}

/** Setting `name` parsed from `raw` (read from `from`), typed as that setting. */
function parse<N extends SettingName>(name: N, raw: string, from: string): Settings[N] {
  const v = parseValue(name, SETTINGS[name], raw, from);
  if (!fits(name, v)) throw new SettingsError(`setting ${name}: ${from} parsed to a value of the wrong type`);
  return v;
}

/** Settings being assembled: each name set once, from its winning source. */
type PartialSettings = { -readonly [N in SettingName]?: Settings[N] };

function put<N extends SettingName>(out: PartialSettings, name: N, value: Settings[N]): void {
  out[name] = value;
}

/** Whether every setting has its value. */
function complete(out: PartialSettings): out is Settings {
  return SETTING_NAMES.every((name) => out[name] !== undefined);
}

/** The setting `env` is the variable of; throws naming `env` when no setting reads it. */
export function settingOfEnv(
  byEnv: ReadonlyMap<string, SettingName>,
  env: string,
  from: string,
): SettingName {
  const name = byEnv.get(env);
  if (name === undefined)
    throw new SettingsError(`${from} maps to ${env}, which is no setting's variable (a bug in the mapping)`);
  return name;
}

/**
 * Build Settings from command-line flags (`--name value` or `--name=value`, booleans may omit the value)
 * and the environment. Precedence: flag, `TOLLGATE_*` variable, envoyproxy/ratelimit's variable
 * (src/settings/envoyproxy-env.ts), default; then `--compat` fills the settings it governs that were
 * not given. Unknown flags are an error naming the closest known one.
 */
export function resolveSettings(
  argv: readonly string[],
  env: NodeJS.ProcessEnv = process.env,
): ResolvedSettings {
  const fromFlags = parseFlags(argv);
  const reference = readReferenceEnv(env);
  const byEnv = new Map(SETTING_NAMES.map((name) => [SETTINGS[name].env, name]));
  const derived = new Map<SettingName, string>();
  const report = emptyReport();
  for (const d of reference.derived) {
    const name = settingOfEnv(byEnv, d.to, d.from.join("+"));
    const s = SETTINGS[name];
    if (fromFlags.has(name)) report.ignored.push(...shadowed(d, `${s.flag} is given`));
    else if (env[s.env] !== undefined) report.ignored.push(...shadowed(d, `${s.env} is set`));
    else {
      derived.set(name, d.value);
      report.mapped.push(`${d.from.join("+")} → ${s.flag} ${d.secret === true ? "***" : d.value}`);
    }
  }
  report.ignored.push(...reference.ignored.map((i) => `${i.name}: ${i.why}`));
  const out: PartialSettings = {};
  const given = new Set<SettingName>();
  for (const name of SETTING_NAMES) {
    const s: Spec = SETTINGS[name];
    const flagValue = fromFlags.get(name);
    const envValue = env[s.env] ?? aliasEnv(s, env);
    const derivedValue = derived.get(name);
    given.add(name);
    if (flagValue !== undefined) put(out, name, parse(name, flagValue, s.flag));
    else if (envValue !== undefined) put(out, name, parse(name, envValue, s.env));
    else if (derivedValue !== undefined)
      put(out, name, parse(name, derivedValue, `${s.env} (from envoyproxy/ratelimit's environment)`));
    else {
      given.delete(name);
      put(out, name, parse(name, s.default, `default of ${s.flag}`));
    }
  }
  if (out.compat === "envoyproxy")
    for (const [name, value] of compatFills(given)) put(out, name, parse(name, value, "--compat envoyproxy"));
  if (out.debugAddr !== undefined && out.debugAddr !== "")
    parseValue("debugAddr", { ...SETTINGS.debugAddr, kind: "addr" }, out.debugAddr, SETTINGS.debugAddr.flag);
  if (!complete(out)) throw new SettingsError("settings: a setting has no value (a bug in the schema)");
  return { settings: Object.freeze(out), referenceEnv: report };
}

/** Build Settings from flags and the environment (see {@link resolveSettings}). */
export function loadSettings(argv: readonly string[], env: NodeJS.ProcessEnv = process.env): Settings {
  return resolveSettings(argv, env).settings;
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
