import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { readReferenceEnv } from "../../src/settings/envoyproxy-env.js";
import { SettingsError } from "../../src/settings.js";

const DOC = readFileSync(new URL("../../docs/migrating.md", import.meta.url), "utf8");

/** The variables the Environment table names (its first column), without wildcard patterns. */
function documented(): string[] {
  const table = DOC.slice(DOC.indexOf("## Environment"), DOC.indexOf("## Algorithms"));
  const names = new Set<string>();
  for (const row of table.split("\n").filter((l) => l.startsWith("| `"))) {
    const first = row.split("|")[1] ?? "";
    for (const m of first.matchAll(/`([A-Z][A-Z0-9_]+)(?:=[^`]*)?`/g)) if (m[1]) names.add(m[1]);
  }
  return [...names];
}

/** A plausible value of a reference variable, so that reading it means something. */
function sample(name: string): string {
  const fixed: Record<string, string> = {
    REDIS_URL: "r:1",
    REDIS_TYPE: "single",
    REDIS_SOCKET_TYPE: "tcp",
    BACKEND_TYPE: "memcache",
    LOG_LEVEL: "info",
    LOG_FORMAT: "json",
    CONFIG_TYPE: "GRPC_XDS_SOTW",
  };
  if (fixed[name] !== undefined) return fixed[name];
  if (name.endsWith("_PORT")) return "1234";
  if (name.endsWith("_HOST") || name === "HOST") return "::";
  if (/INTERVAL$/.test(name)) return "1s";
  if (/FACTOR$|RATIO$/.test(name)) return "0.5";
  if (name === "PORT") return "1234";
  if (
    /(USE_TLS|ENABLED|MODE|START|JITTER|ROOT$|DOTFILES|^REDIS_TLS$|^USE_|PERSECOND$)/.test(name) &&
    !name.startsWith("RUNTIME_ROOT")
  )
    return "true";
  return "x";
}

describe("docs/migrating.md, Environment", () => {
  it("names only variables that tollgate reads: each one is mapped, ignored with a reason, or refused", () => {
    const names = documented();
    expect(names.length).toBeGreaterThan(40);
    const silent: string[] = [];
    for (const name of names) {
      const env = {
        [name]: sample(name),
        ...(name.startsWith("CONFIG_GRPC") ? { CONFIG_TYPE: "GRPC_XDS_SOTW" } : {}),
      };
      try {
        const read = readReferenceEnv(env);
        const reported =
          read.derived.some((d) => d.from.includes(name)) || read.ignored.some((i) => i.name === name);
        if (!reported) silent.push(name);
      } catch (err) {
        if (!(err instanceof SettingsError) || !err.message.includes(name))
          silent.push(`${name} (${String(err)})`);
      }
    }
    expect(silent).toEqual([]);
  });
});
