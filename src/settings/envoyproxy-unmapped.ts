/**
 * envoyproxy/ratelimit variables that tollgate reads without effect (with the reason the startup line
 * gives) and those it refuses (with the fix). The ones it maps are in envoyproxy-env.ts.
 */

const METRICS = "metrics are Prometheus text on GET /metrics (HTTP port, and the debug port)";

/** Set reference variables without a tollgate counterpart, by reason. */
export const WITHOUT_EFFECT: Readonly<Record<string, string>> = {
  USE_STATSD: METRICS,
  STATSD_HOST: METRICS,
  STATSD_PORT: METRICS,
  USE_DOG_STATSD: METRICS,
  USE_DOG_STATSD_MOGRIFIERS: METRICS,
  EXTRA_TAGS: METRICS,
  STATS_FLUSH_INTERVAL: METRICS,
  DISABLE_STATS: METRICS,
  USE_PROMETHEUS: METRICS,
  PROMETHEUS_ADDR: METRICS,
  PROMETHEUS_PATH: METRICS,
  PROMETHEUS_MAPPER_YAML: METRICS,
  REDIS_POOL_SIZE: "one pipelined connection per Redis node; --redis-batch-max bounds a batch",
  REDIS_PIPELINE_WINDOW: "decisions of one event-loop turn share a round trip (--redis-batch-max)",
  REDIS_PIPELINE_LIMIT: "decisions of one event-loop turn share a round trip (--redis-batch-max)",
  REDIS_USE_EXPLICIT_PIPELINE: "decisions of one event-loop turn share a round trip (--redis-batch-max)",
  REDIS_TIMEOUT: "a Redis call gets --store-deadline (10ms), then the failure policy decides",
  REDIS_HEALTH_CHECK_ACTIVE_CONNECTION:
    "/healthcheck reports serving; the store's state is on /rlconfig and tollgate_degraded",
  REDIS_POOL_ON_EMPTY_BEHAVIOR: "no connection pool",
  REDIS_PERSECOND: "per-second limits share the one store",
  REDIS_PERSECOND_SOCKET_TYPE: "per-second limits share the one store",
  REDIS_PERSECOND_TYPE: "per-second limits share the one store",
  REDIS_PERSECOND_URL: "per-second limits share the one store",
  REDIS_PERSECOND_POOL_SIZE: "per-second limits share the one store",
  REDIS_PERSECOND_AUTH: "per-second limits share the one store",
  REDIS_PERSECOND_TLS: "per-second limits share the one store",
  NEAR_LIMIT_RATIO: "no near-limit counter; see docs/migrating.md, Metrics",
  EXPIRATION_JITTER_MAX_SECONDS: "bucket keys expire when full again, not at a jittered window end",
  LOCAL_CACHE_SIZE_IN_BYTES:
    "no over-limit cache; --lease-size trades exactness for fewer Redis calls instead",
  STOP_CACHE_KEY_INCREMENT_WHEN_OVERLIMIT: "denied requests never consume",
  LIMIT_LIMIT_HEADER: "header names follow --response-headers (docs/config.md)",
  LIMIT_REMAINING_HEADER: "header names follow --response-headers (docs/config.md)",
  LIMIT_RESET_HEADER: "header names follow --response-headers (docs/config.md)",
  RUNTIME_WATCH_ROOT:
    "the config directory is watched through symlink swaps at any level (file events, and polling every --reload-poll)",
  RUNTIME_IGNOREDOTFILES: "names starting with . are always skipped",
  MERGE_DOMAIN_CONFIG: "a domain must be defined in one file (a second one is reported as a duplicate)",
  HEALTHY_WITH_AT_LEAST_ONE_CONFIG_LOADED:
    "tollgate serves only once a config is loaded (or with --xds-force-start)",
  GRPC_MAX_CONNECTION_AGE: "connections stay until idle for 5 minutes or drained",
  GRPC_MAX_CONNECTION_AGE_GRACE: "connections stay until idle for 5 minutes or drained",
  RESPONSE_DYNAMIC_METADATA: "no dynamic metadata in responses",
  // Set by Envoy Gateway; envoyproxy/ratelimit does not read it either (it requires client
  // certificates only with GRPC_CLIENT_TLS_CACERT), so neither does tollgate.
  GRPC_SERVER_TLS_CA_CERT:
    "not an envoyproxy/ratelimit setting: client certificates are required only with GRPC_CLIENT_TLS_CACERT",
  CONFIG_GRPC_XDS_SERVER_CONNECT_RETRY_INTERVAL: "reconnection waits follow XDS_CLIENT_BACKOFF_*",
  XDS_CLIENT_MAX_MSG_SIZE_IN_BYTES: "xDS messages of any size are read",
  TRACING_ENABLED: "no tracing",
  TRACING_SERVICE_NAME: "no tracing",
  TRACING_SERVICE_NAMESPACE: "no tracing",
  TRACING_SERVICE_INSTANCE_ID: "no tracing",
  TRACING_EXPORTER_PROTOCOL: "no tracing",
  TRACING_SAMPLING_RATE: "no tracing",
};

/** Set reference variables tollgate cannot honour: a start with them would behave differently. */
export const UNSUPPORTED: Readonly<Record<string, string>> = {
  GRPC_UDS: "tollgate listens on TCP only; set GRPC_HOST/GRPC_PORT",
  GRPC_CLIENT_TLS_SAN: "client certificates are checked against GRPC_CLIENT_TLS_CACERT only",
  REDIS_TLS_CLIENT_CERT: "no Redis client certificates; use REDIS_AUTH",
  REDIS_TLS_CLIENT_KEY: "no Redis client certificates; use REDIS_AUTH",
  REDIS_SENTINEL_AUTH: "Sentinels are reached with REDIS_AUTH's credentials",
  MEMCACHE_HOST_PORT: "no memcache backend; use Redis (REDIS_URL)",
  MEMCACHE_SRV: "no memcache backend; use Redis (REDIS_URL)",
};
