/**
 * The settings schema: every setting tollgate reads, with its flag, `TOLLGATE_*` environment twin,
 * type, default, unit and meaning. src/settings.ts parses it; the README table is rendered from it.
 */

export type Kind = "string" | "int" | "bool" | "duration" | "enum" | "addr";

export interface Spec<K extends Kind = Kind> {
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
