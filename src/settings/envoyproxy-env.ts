/**
 * envoyproxy/ratelimit's environment, read as tollgate settings, so that swapping the image of an
 * existing Deployment keeps its Redis, ports, config directory, log level and xDS server. Names,
 * meanings and defaults follow the reference's `src/settings/settings.go`; docs/migrating.md has
 * the table. Only variables that are set are read (no reference defaults are applied here; the
 * image's `/bin/ratelimit` entry point supplies those). A reference variable becomes the value of a
 * `TOLLGATE_*` twin, which the settings loader uses only when neither the flag nor the twin is set.
 *
 * What tollgate cannot honour either fails here with the fix (a unix socket, memcache, client
 * certificates for Redis) or is listed as ignored with the reason (statsd, pool sizes).
 */
import { join } from "node:path";
import { SettingsError } from "../settings-error.js";
import { UNSUPPORTED, WITHOUT_EFFECT } from "./envoyproxy-unmapped.js";
import { goBool, goDurationMs, hostPort, logLevel } from "./go-values.js";

/** One tollgate setting derived from reference variables. */
export interface DerivedSetting {
  /** The reference variables it comes from, e.g. `["REDIS_URL", "REDIS_TYPE"]`. */
  readonly from: readonly string[];
  /** The `TOLLGATE_*` twin it sets. */
  readonly to: string;
  readonly value: string;
  /** Shown instead of the value in logs (a password inside). */
  readonly secret?: boolean;
}

/** A reference variable that is set but has no effect, and why. */
export interface IgnoredVariable {
  readonly name: string;
  readonly why: string;
}

/** What the reference environment means for tollgate. */
export interface ReferenceEnv {
  readonly derived: readonly DerivedSetting[];
  readonly ignored: readonly IgnoredVariable[];
}

type Env = Readonly<Record<string, string | undefined>>;

/** Collects the derived settings and ignored variables of one environment. */
class Mapper {
  readonly derived: DerivedSetting[] = [];
  readonly ignored: IgnoredVariable[] = [];
  constructor(readonly env: Env) {}

  /** The variable's value when set (empty counts as unset, as with envconfig). */
  get(name: string): string | undefined {
    const v = this.env[name];
    return v === undefined || v === "" ? undefined : v;
  }

  /** The names of `names` that are set. */
  present(names: readonly string[]): string[] {
    return names.filter((n) => this.get(n) !== undefined);
  }

  derive(from: readonly string[], to: string, value: string, secret = false): void {
    this.derived.push({ from, to, value, ...(secret ? { secret } : {}) });
  }

  fail(name: string, why: string): never {
    throw new SettingsError(`${name}=${JSON.stringify(this.get(name) ?? "")} (envoyproxy/ratelimit): ${why}`);
  }
}

function redisStore(m: Mapper): void {
  const backend = m.get("BACKEND_TYPE");
  if (backend !== undefined && backend.toLowerCase() !== "redis")
    m.fail("BACKEND_TYPE", "tollgate stores buckets in Redis or in-process; unset it or use redis");
  const url = m.get("REDIS_URL");
  const others = m.present(["REDIS_SOCKET_TYPE", "REDIS_TYPE", "REDIS_AUTH", "REDIS_TLS"]);
  if (url === undefined) {
    const tls = m.present(["REDIS_TLS_CACERT", "REDIS_TLS_SKIP_HOSTNAME_VERIFICATION"]);
    for (const name of [...others, ...tls])
      m.ignored.push({ name, why: "REDIS_URL is not set: the in-process store is used" });
    return;
  }
  const from = ["REDIS_URL", ...others];
  if (/^rediss?:\/\//i.test(url)) {
    m.derive(from, "TOLLGATE_STORE", url, true);
    return;
  }
  const socket = (m.get("REDIS_SOCKET_TYPE") ?? "unix").toLowerCase();
  if (socket !== "tcp")
    m.fail(
      "REDIS_SOCKET_TYPE",
      "tollgate connects to Redis over TCP only (unset, the reference's default is unix); set REDIS_SOCKET_TYPE=tcp and REDIS_URL=host:port",
    );
  const type = (m.get("REDIS_TYPE") ?? "single").toLowerCase();
  const tls = goBool(m, "REDIS_TLS") ?? false;
  const auth = m.get("REDIS_AUTH");
  const userinfo =
    auth === undefined
      ? ""
      : auth.includes(":")
        ? `${encodeURIComponent(auth.slice(0, auth.indexOf(":")))}:${encodeURIComponent(auth.slice(auth.indexOf(":") + 1))}@`
        : `:${encodeURIComponent(auth)}@`;
  const hosts = url.split(",").map((h) => h.trim());
  let store: string;
  if (type === "single") store = `${tls ? "rediss" : "redis"}://${userinfo}${url.trim()}`;
  else if (type === "cluster") store = `redis-cluster://${userinfo}${hosts.join(",")}`;
  else if (type === "sentinel") {
    if (hosts.length < 2)
      m.fail("REDIS_URL", "REDIS_TYPE=sentinel expects <master name>,<sentinel host:port>,…");
    store = `redis-sentinel://${userinfo}${hosts.slice(1).join(",")}/${hosts[0]}`;
  } else m.fail("REDIS_TYPE", "expected single, sentinel or cluster");
  if (tls && type !== "single")
    m.fail("REDIS_TLS", `TLS is supported for REDIS_TYPE=single only (got ${type})`);
  m.derive(from, "TOLLGATE_STORE", store, auth !== undefined);
  const ca = m.get("REDIS_TLS_CACERT");
  if (ca !== undefined) m.derive(["REDIS_TLS_CACERT"], "TOLLGATE_REDIS_TLS_CA_FILE", ca);
  if (goBool(m, "REDIS_TLS_SKIP_HOSTNAME_VERIFICATION") === true)
    m.fail("REDIS_TLS_SKIP_HOSTNAME_VERIFICATION", "the Redis server certificate is always verified");
}

function listeners(m: Mapper): void {
  const addr = (hostVar: string, portVar: string, to: string, defaultPort: string) => {
    const from = m.present([hostVar, portVar]);
    if (from.length === 0) return;
    m.derive(from, to, hostPort(m, hostVar, portVar, defaultPort));
  };
  addr("HOST", "PORT", "TOLLGATE_HTTP_ADDR", "8080");
  addr("GRPC_HOST", "GRPC_PORT", "TOLLGATE_GRPC_ADDR", "8081");
  addr("DEBUG_HOST", "DEBUG_PORT", "TOLLGATE_DEBUG_ADDR", "6070");
  const files = ["GRPC_SERVER_TLS_CERT", "GRPC_SERVER_TLS_KEY", "GRPC_CLIENT_TLS_CACERT"] as const;
  if (goBool(m, "GRPC_SERVER_USE_TLS") === true) {
    if (m.get("GRPC_SERVER_TLS_CERT") === undefined || m.get("GRPC_SERVER_TLS_KEY") === undefined)
      m.fail("GRPC_SERVER_USE_TLS", "needs GRPC_SERVER_TLS_CERT and GRPC_SERVER_TLS_KEY");
    const to = ["TOLLGATE_TLS_CERT", "TOLLGATE_TLS_KEY", "TOLLGATE_TLS_CLIENT_CA"] as const;
    files.forEach((name, i) => {
      const v = m.get(name);
      if (v !== undefined) m.derive(["GRPC_SERVER_USE_TLS", name], to[i] ?? "", v);
    });
  } else {
    const why = "GRPC_SERVER_USE_TLS is not true: the gRPC port is plaintext (h2c)";
    for (const name of m.present(["GRPC_SERVER_USE_TLS", ...files])) m.ignored.push({ name, why });
  }
}

function configSource(m: Mapper): void {
  const runtime = m.present(["RUNTIME_ROOT", "RUNTIME_SUBDIRECTORY", "RUNTIME_APPDIRECTORY"]);
  if (runtime.length > 0) {
    const dir = join(
      m.get("RUNTIME_ROOT") ?? "/srv/runtime_data/current",
      m.get("RUNTIME_SUBDIRECTORY") ?? "",
      m.get("RUNTIME_APPDIRECTORY") ?? "config",
    );
    m.derive(runtime, "TOLLGATE_CONFIG", dir);
  }
  const type = m.get("CONFIG_TYPE")?.toUpperCase();
  if (type !== undefined && type !== "FILE" && type !== "GRPC_XDS_SOTW")
    m.fail("CONFIG_TYPE", "expected FILE or GRPC_XDS_SOTW");
  const xdsVars = m.present([
    "CONFIG_GRPC_XDS_SERVER_URL",
    "CONFIG_GRPC_XDS_NODE_ID",
    "CONFIG_GRPC_XDS_NODE_METADATA",
    "CONFIG_GRPC_XDS_CLIENT_ADDITIONAL_HEADERS",
    "CONFIG_GRPC_XDS_SERVER_USE_TLS",
    "CONFIG_GRPC_XDS_SERVER_TLS_CACERT",
    "CONFIG_GRPC_XDS_CLIENT_TLS_CERT",
    "CONFIG_GRPC_XDS_CLIENT_TLS_KEY",
    "CONFIG_GRPC_XDS_SERVER_TLS_SAN",
    "XDS_CLIENT_BACKOFF_INITIAL_INTERVAL",
    "XDS_CLIENT_BACKOFF_MAX_INTERVAL",
    "XDS_CLIENT_BACKOFF_RANDOM_FACTOR",
    "XDS_CLIENT_BACKOFF_JITTER",
    "FORCE_START_WITHOUT_INITIAL_CONFIG",
  ]);
  if (type !== "GRPC_XDS_SOTW") {
    for (const name of xdsVars) m.ignored.push({ name, why: "CONFIG_TYPE is not GRPC_XDS_SOTW" });
    return;
  }
  const server = m.get("CONFIG_GRPC_XDS_SERVER_URL") ?? "localhost:18000";
  m.derive(["CONFIG_TYPE", ...m.present(["CONFIG_GRPC_XDS_SERVER_URL"])], "TOLLGATE_XDS_SERVER", server);
  const plain: readonly (readonly [string, string, boolean?])[] = [
    ["CONFIG_GRPC_XDS_NODE_ID", "TOLLGATE_XDS_NODE_ID"],
    ["CONFIG_GRPC_XDS_NODE_METADATA", "TOLLGATE_XDS_NODE_METADATA"],
    ["CONFIG_GRPC_XDS_CLIENT_ADDITIONAL_HEADERS", "TOLLGATE_XDS_HEADERS", true],
    ["CONFIG_GRPC_XDS_SERVER_TLS_CACERT", "TOLLGATE_XDS_TLS_CA"],
    ["CONFIG_GRPC_XDS_CLIENT_TLS_CERT", "TOLLGATE_XDS_TLS_CERT"],
    ["CONFIG_GRPC_XDS_CLIENT_TLS_KEY", "TOLLGATE_XDS_TLS_KEY"],
    ["CONFIG_GRPC_XDS_SERVER_TLS_SAN", "TOLLGATE_XDS_TLS_SERVER_NAME"],
  ];
  for (const [name, to, secret] of plain) {
    const v = m.get(name);
    if (v !== undefined) m.derive([name], to, v, secret === true);
  }
  const bool = (name: string, to: string) => {
    const v = goBool(m, name);
    if (v !== undefined) m.derive([name], to, String(v));
  };
  bool("CONFIG_GRPC_XDS_SERVER_USE_TLS", "TOLLGATE_XDS_TLS");
  bool("FORCE_START_WITHOUT_INITIAL_CONFIG", "TOLLGATE_XDS_FORCE_START");
  const duration = (name: string, to: string) => {
    const ms = goDurationMs(m, name);
    if (ms !== undefined) m.derive([name], to, `${ms}ms`);
  };
  duration("XDS_CLIENT_BACKOFF_INITIAL_INTERVAL", "TOLLGATE_XDS_BACKOFF_INITIAL");
  duration("XDS_CLIENT_BACKOFF_MAX_INTERVAL", "TOLLGATE_XDS_BACKOFF_MAX");
  const factor = m.get("XDS_CLIENT_BACKOFF_RANDOM_FACTOR");
  const jitterOn = goBool(m, "XDS_CLIENT_BACKOFF_JITTER");
  if (factor !== undefined || jitterOn !== undefined) {
    const f = factor === undefined ? 0.5 : Number(factor);
    if (!Number.isFinite(f) || f < 0 || f > 1) m.fail("XDS_CLIENT_BACKOFF_RANDOM_FACTOR", "expected 0 to 1");
    const percent = jitterOn === false ? 0 : Math.round(f * 100);
    const from = m.present(["XDS_CLIENT_BACKOFF_RANDOM_FACTOR", "XDS_CLIENT_BACKOFF_JITTER"]);
    m.derive(from, "TOLLGATE_XDS_BACKOFF_JITTER", String(percent));
  }
}

function behaviour(m: Mapper): void {
  const level = m.get("LOG_LEVEL");
  if (level !== undefined) m.derive(["LOG_LEVEL"], "TOLLGATE_LOG_LEVEL", logLevel(m, "LOG_LEVEL"));
  const format = m.get("LOG_FORMAT")?.toLowerCase();
  if (format !== undefined) {
    if (format !== "json" && format !== "text") m.fail("LOG_FORMAT", "expected text or json");
    m.derive(["LOG_FORMAT"], "TOLLGATE_LOG_FORMAT", format === "json" ? "json" : "pretty");
  }
  const prefix = m.get("CACHE_KEY_PREFIX");
  if (prefix !== undefined) m.derive(["CACHE_KEY_PREFIX"], "TOLLGATE_KEY_PREFIX", prefix);
  const headers = goBool(m, "LIMIT_RESPONSE_HEADERS_ENABLED");
  if (headers !== undefined)
    m.derive(["LIMIT_RESPONSE_HEADERS_ENABLED"], "TOLLGATE_RESPONSE_HEADERS", headers ? "draft03" : "off");
  const shadow = goBool(m, "SHADOW_MODE");
  if (shadow !== undefined) m.derive(["SHADOW_MODE"], "TOLLGATE_SHADOW_MODE", String(shadow));
}

/**
 * Read envoyproxy/ratelimit's variables from `env`. Throws SettingsError naming the variable and the
 * fix when one asks for something tollgate does not do.
 */
export function readReferenceEnv(env: Env): ReferenceEnv {
  const m = new Mapper(env);
  for (const name of m.present(Object.keys(UNSUPPORTED))) m.fail(name, UNSUPPORTED[name] ?? "");
  redisStore(m);
  listeners(m);
  configSource(m);
  behaviour(m);
  for (const name of m.present(Object.keys(WITHOUT_EFFECT)))
    m.ignored.push({ name, why: WITHOUT_EFFECT[name] ?? "" });
  return { derived: m.derived, ignored: m.ignored };
}

export type { Mapper };
