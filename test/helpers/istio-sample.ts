/**
 * The Istio sample's envoyproxy/ratelimit Deployment (istio/istio samples/ratelimit/rate-limit-service.yaml):
 * its container environment and where its ConfigMap is mounted, for the drop-in tests.
 */

/** The container's `env`. */
export const ISTIO_SAMPLE_ENV = {
  LOG_LEVEL: "debug",
  REDIS_SOCKET_TYPE: "tcp",
  REDIS_URL: "redis:6379",
  USE_STATSD: "false",
  RUNTIME_ROOT: "/data",
  RUNTIME_SUBDIRECTORY: "ratelimit",
  RUNTIME_WATCH_ROOT: "false",
  RUNTIME_IGNOREDOTFILES: "true",
  HOST: "::",
  GRPC_HOST: "::",
} as const;

/** The ConfigMap (`ratelimit-config`, key `config.yaml`) the sample's comment shows, mounted at /data/ratelimit/config. */
export const ISTIO_SAMPLE_CONFIG = `domain: echo-ratelimit
descriptors:
  - key: PATH
    value: "/"
    rate_limit:
      unit: minute
      requests_per_unit: 1
  - key: PATH
    rate_limit:
      unit: minute
      requests_per_unit: 100
`;

/** The ports the sample's Service and container expose: HTTP, gRPC, debug. */
export const ISTIO_SAMPLE_PORTS = { http: 8080, grpc: 8081, debug: 6070 } as const;
