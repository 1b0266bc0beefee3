/**
 * envoyproxy/ratelimit reads its environment with Go's envconfig: booleans as `strconv.ParseBool`,
 * durations as `time.ParseDuration`, log levels as logrus names. These read the same spellings.
 */
import type { Mapper } from "./envoyproxy-env.js";

const TRUE = new Set(["1", "t", "T", "TRUE", "true", "True"]);
const FALSE = new Set(["0", "f", "F", "FALSE", "false", "False"]);

/** A Go boolean variable; undefined when unset. */
export function goBool(m: Mapper, name: string): boolean | undefined {
  const v = m.get(name);
  if (v === undefined) return undefined;
  if (TRUE.has(v)) return true;
  if (FALSE.has(v)) return false;
  return m.fail(name, "expected true or false");
}

const GO_UNIT_MS: Readonly<Record<string, number>> = {
  ns: 1e-6,
  us: 1e-3,
  µs: 1e-3,
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
};

/** A Go duration (`10s`, `1m30s`, `250ms`, `0`) in whole milliseconds; undefined when unset. */
export function goDurationMs(m: Mapper, name: string): number | undefined {
  const v = m.get(name);
  if (v === undefined) return undefined;
  if (v === "0") return 0;
  const part = /(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h)/gy;
  let ms = 0;
  let end = 0;
  for (let match = part.exec(v); match !== null; match = part.exec(v)) {
    ms += Number(match[1]) * (GO_UNIT_MS[match[2] ?? ""] ?? Number.NaN);
    end = part.lastIndex;
  }
  if (end !== v.length || end === 0 || !Number.isFinite(ms))
    return m.fail(name, "expected a Go duration such as 10s, 1m30s or 250ms");
  return Math.round(ms);
}

/** `HOST:PORT` of a listener from a host and a port variable (either may be unset). */
export function hostPort(m: Mapper, hostVar: string, portVar: string, defaultPort: string): string {
  const host = m.get(hostVar) ?? "0.0.0.0";
  const port = m.get(portVar) ?? defaultPort;
  if (!/^\d{1,5}$/.test(port) || Number(port) > 65535) m.fail(portVar, "expected a port number 0-65535");
  return `${host.includes(":") && !host.startsWith("[") ? `[${host}]` : host}:${port}`;
}

const LEVELS: Readonly<Record<string, string>> = {
  trace: "trace",
  debug: "debug",
  info: "info",
  warn: "warn",
  warning: "warn",
  error: "error",
  fatal: "fatal",
  panic: "fatal",
};

/** A logrus level name (any case) as a pino level. */
export function logLevel(m: Mapper, name: string): string {
  const level = LEVELS[(m.get(name) ?? "").toLowerCase()];
  return level ?? m.fail(name, `expected one of ${Object.keys(LEVELS).join(", ")}`);
}
