/**
 * One schema for every setting: each has a flag, a `TOLLGATE_*` environment twin, a type, a default and a
 * unit. The README's settings table is rendered from this schema (`npm run docs:settings`) and a test keeps
 * the two in sync. Precedence: flag, then environment, then default.
 */

type Kind = "string" | "int" | "bool" | "duration" | "enum" | "addr";

interface Spec<K extends Kind = Kind> {
  readonly kind: K;
  readonly flag: string;
  readonly env: string;
  readonly default: string;
  readonly unit?: string;
  readonly values?: readonly string[];
  readonly min?: number;
  readonly doc: string;
  /** Shown as a placeholder instead of the value in logs (`***`). */
  readonly secret?: boolean;
}

function spec<K extends Kind>(s: Spec<K>): Spec<K> {
  return s;
}

/** Every setting tollgate reads. */
export const SETTINGS = {
  config: spec({
    kind: "string",
    flag: "--config",
    env: "TOLLGATE_CONFIG",
    default: "config",
    doc: "Rule file, or a directory of `*.yaml`/`*.yml` (dotfiles and `..` dirs skipped).",
  }),
  store: spec({
    kind: "string",
    flag: "--store",
    env: "TOLLGATE_STORE",
    default: "memory",
    doc: "`memory`, `redis://[user:pass@]host:port[/db]`, `rediss://…`, `redis-sentinel://h:p,h:p/master` or `redis-cluster://h:p,h:p`.",
  }),
  grpcAddr: spec({
    kind: "addr",
    flag: "--grpc-addr",
    env: "TOLLGATE_GRPC_ADDR",
    default: "0.0.0.0:8081",
    doc: "gRPC (h2c) listen address: RLS `ShouldRateLimit`, ext_authz `Check`, health.",
  }),
  httpAddr: spec({
    kind: "addr",
    flag: "--http-addr",
    env: "TOLLGATE_HTTP_ADDR",
    default: "0.0.0.0:8080",
    doc: "HTTP listen address: `/healthcheck`, `/json`, `/rlconfig`, `/metrics`.",
  }),
  logLevel: spec({
    kind: "enum",
    flag: "--log-level",
    env: "TOLLGATE_LOG_LEVEL",
    default: "info",
    values: ["trace", "debug", "info", "warn", "error", "fatal", "silent"],
    doc: "pino log level. No per-request logs at `info`.",
  }),
  responseHeaders: spec({
    kind: "enum",
    flag: "--response-headers",
    env: "TOLLGATE_RESPONSE_HEADERS",
    default: "legacy",
    values: ["legacy", "draft03", "ietf", "off"],
    doc: "Rate limit headers added to responses (see docs/config.md).",
  }),
  retryAfterJitter: spec({
    kind: "int",
    flag: "--retry-after-jitter",
    env: "TOLLGATE_RETRY_AFTER_JITTER",
    default: "0",
    unit: "s",
    min: 0,
    doc: "Random 0..N seconds added to `Retry-After` so denied clients do not return in lockstep.",
  }),
  shadowMode: spec({
    kind: "bool",
    flag: "--shadow-mode",
    env: "TOLLGATE_SHADOW_MODE",
    default: "false",
    doc: "Global shadow mode: statuses are reported, the overall code is always OK.",
  }),
  defaultAlgorithm: spec({
    kind: "enum",
    flag: "--default-algorithm",
    env: "TOLLGATE_DEFAULT_ALGORITHM",
    default: "gcra",
    values: ["gcra", "fixed_window"],
    doc: "Algorithm of limits that do not name one.",
  }),
  keyPrefix: spec({
    kind: "string",
    flag: "--key-prefix",
    env: "TOLLGATE_KEY_PREFIX",
    default: "",
    doc: "Prefix of every Redis key, so several deployments can share one Redis.",
  }),
  maxDescriptors: spec({
    kind: "int",
    flag: "--max-descriptors",
    env: "TOLLGATE_MAX_DESCRIPTORS",
    default: "64",
    min: 1,
    doc: "Descriptors per request; more is INVALID_ARGUMENT.",
  }),
  maxEntries: spec({
    kind: "int",
    flag: "--max-entries",
    env: "TOLLGATE_MAX_ENTRIES",
    default: "16",
    min: 1,
    doc: "Entries per descriptor; more is INVALID_ARGUMENT.",
  }),
  maxKeyValueBytes: spec({
    kind: "int",
    flag: "--max-key-value-bytes",
    env: "TOLLGATE_MAX_KEY_VALUE_BYTES",
    default: "256",
    unit: "bytes",
    min: 1,
    doc: "Length of one entry key or value; longer is INVALID_ARGUMENT.",
  }),
  maxMessageBytes: spec({
    kind: "int",
    flag: "--max-message-bytes",
    env: "TOLLGATE_MAX_MESSAGE_BYTES",
    default: "4194304",
    unit: "bytes",
    min: 1024,
    doc: "Largest gRPC or `/json` request body; larger is RESOURCE_EXHAUSTED / 413.",
  }),
  maxInFlight: spec({
    kind: "int",
    flag: "--max-in-flight",
    env: "TOLLGATE_MAX_IN_FLIGHT",
    default: "10000",
    min: 1,
    doc: "Requests in flight per process; past it, RESOURCE_EXHAUSTED at once instead of queueing.",
  }),
  memoryMaxBuckets: spec({
    kind: "int",
    flag: "--memory-max-buckets",
    env: "TOLLGATE_MEMORY_MAX_BUCKETS",
    default: "1000000",
    min: 1,
    doc: "Buckets the in-process store keeps (LRU eviction of idle ones past it).",
  }),
  redisCommandTimeout: spec({
    kind: "duration",
    flag: "--redis-command-timeout",
    env: "TOLLGATE_REDIS_COMMAND_TIMEOUT",
    default: "250ms",
    unit: "ms",
    doc: "ioredis `commandTimeout`: a Redis command with no reply by then fails (the store deadline below usually fires first).",
  }),
  redisTlsCaFile: spec({
    kind: "string",
    flag: "--redis-tls-ca-file",
    env: "TOLLGATE_REDIS_TLS_CA_FILE",
    default: "",
    doc: "PEM CA bundle that signs the Redis server certificate, for `rediss://` (default: Node's CAs).",
  }),
  storeDeadline: spec({
    kind: "duration",
    flag: "--store-deadline",
    env: "TOLLGATE_STORE_DEADLINE",
    default: "10ms",
    unit: "ms",
    doc: "A Redis take not answered by then counts as failed and the failure policy decides (Envoy's RLS timeout is 20 ms).",
  }),
  onStoreError: spec({
    kind: "enum",
    flag: "--on-store-error",
    env: "TOLLGATE_ON_STORE_ERROR",
    default: "local",
    values: ["local", "allow", "deny", "error"],
    doc: "Failure policy when a domain and rule set none: `local` in-process fallback with limits ÷ live instances, `allow` (fail open), `deny` (fail closed), `error` (gRPC UNAVAILABLE, Envoy's `failure_mode_deny` decides).",
  }),
  breakerFailures: spec({
    kind: "int",
    flag: "--breaker-failures",
    env: "TOLLGATE_BREAKER_FAILURES",
    default: "5",
    min: 1,
    doc: "Consecutive store failures that open the circuit breaker (it also opens at a 50% failure ratio over 10 s with ≥ 20 calls).",
  }),
  breakerOpen: spec({
    kind: "duration",
    flag: "--breaker-open",
    env: "TOLLGATE_BREAKER_OPEN",
    default: "1s",
    unit: "ms",
    doc: "First open period of the breaker; doubles on every failed probe (±20% jitter) up to 30 s.",
  }),
  instances: spec({
    kind: "int",
    flag: "--instances",
    env: "TOLLGATE_INSTANCES",
    default: "0",
    min: 0,
    doc: "Pin the number of tollgate instances the `local` fallback divides limits by; 0 = count live instances through a Redis heartbeat.",
  }),
  tlsCert: spec({
    kind: "string",
    flag: "--tls-cert",
    env: "TOLLGATE_TLS_CERT",
    default: "",
    doc: "PEM certificate file: serve gRPC over TLS (with `--tls-key`).",
  }),
  tlsKey: spec({
    kind: "string",
    flag: "--tls-key",
    env: "TOLLGATE_TLS_KEY",
    default: "",
    doc: "PEM private key file of `--tls-cert`.",
  }),
  tlsClientCa: spec({
    kind: "string",
    flag: "--tls-client-ca",
    env: "TOLLGATE_TLS_CLIENT_CA",
    default: "",
    doc: "PEM CA file: require client certificates signed by it (mTLS).",
  }),
  metricsMaxSeries: spec({
    kind: "int",
    flag: "--metrics-max-series",
    env: "TOLLGATE_METRICS_MAX_SERIES",
    default: "1000",
    min: 1,
    doc: "Series per request-influenced metric (`detailed_metric` values, limit overrides) before values fold into `_overflow_`.",
  }),
  leaseSize: spec({
    kind: "int",
    flag: "--lease-size",
    env: "TOLLGATE_LEASE_SIZE",
    default: "0",
    min: 0,
    doc: "Default two-tier lease size for rules without `lease` (Redis stores only); 0 = off. See docs/lease.md.",
  }),
  leaseTtl: spec({
    kind: "duration",
    flag: "--lease-ttl",
    env: "TOLLGATE_LEASE_TTL",
    default: "1s",
    unit: "ms",
    doc: "Lifetime of a default lease: unused tokens go back to Redis after it.",
  }),
  drainTimeout: spec({
    kind: "duration",
    flag: "--drain-timeout",
    env: "TOLLGATE_DRAIN_TIMEOUT",
    default: "10s",
    unit: "ms",
    doc: "On SIGTERM/SIGINT, how long in-flight requests may take before exit.",
  }),
  reloadDebounce: spec({
    kind: "duration",
    flag: "--reload-debounce",
    env: "TOLLGATE_RELOAD_DEBOUNCE",
    default: "250ms",
    unit: "ms",
    doc: "Quiet time after a change of the config or tenants files before they are reloaded (one reload per burst of writes).",
  }),
  reloadPoll: spec({
    kind: "duration",
    flag: "--reload-poll",
    env: "TOLLGATE_RELOAD_POLL",
    default: "5s",
    unit: "ms",
    doc: "Also check the config and tenants files for changes this often (fallback where file events are lost); `0s` = events only.",
  }),
  tenants: spec({
    kind: "string",
    flag: "--tenants",
    env: "TOLLGATE_TENANTS",
    default: "",
    doc: "Tenant → tier file (`*.csv` `tenant,tier` lines, or a `*.yaml` map), reloaded like the config. See docs/config.md, Tiers.",
  }),
  resetToken: spec({
    kind: "string",
    flag: "--reset-token",
    env: "TOLLGATE_RESET_TOKEN",
    default: "",
    secret: true,
    doc: "Bearer token of `POST /v1/reset`; empty disables the reset route. Prefer the env var (flags show in `ps`).",
  }),
} as const;

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
      return n;
    }
    case "bool":
      if (["true", "1", "yes", "on"].includes(raw.toLowerCase())) return true;
      if (["false", "0", "no", "off", ""].includes(raw.toLowerCase())) return false;
      throw bad("expected true or false");
    case "duration": {
      const ms = parseDuration(raw);
      if (ms === undefined) throw bad("expected a duration such as 250ms, 5s, 1m");
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
