import { describe, expect, it } from "vitest";
import { loadSettings, resolveSettings, SettingsError } from "../../src/settings.js";
import { ISTIO_SAMPLE_ENV } from "../helpers/istio-sample.js";

describe("envoyproxy/ratelimit's environment", () => {
  it("reads the Istio sample's Deployment as the same store, config directory, ports and log level", () => {
    const { settings, referenceEnv } = resolveSettings([], ISTIO_SAMPLE_ENV);
    expect(settings.store).toBe("redis://redis:6379");
    expect(settings.config).toBe("/data/ratelimit/config");
    expect(settings.httpAddr).toEqual({ host: "::", port: 8080 });
    expect(settings.grpcAddr).toEqual({ host: "::", port: 8081 });
    expect(settings.logLevel).toBe("debug");
    expect(referenceEnv.mapped).toEqual([
      "REDIS_URL+REDIS_SOCKET_TYPE → --store redis://redis:6379",
      "HOST → --http-addr [::]:8080",
      "GRPC_HOST → --grpc-addr [::]:8081",
      "RUNTIME_ROOT+RUNTIME_SUBDIRECTORY → --config /data/ratelimit/config",
      "LOG_LEVEL → --log-level debug",
    ]);
    expect(referenceEnv.ignored.map((l) => l.split(":")[0])).toEqual([
      "USE_STATSD",
      "RUNTIME_WATCH_ROOT",
      "RUNTIME_IGNOREDOTFILES",
    ]);
    expect(referenceEnv.ignored[0]).toContain("GET /metrics");
  });

  it("lets a flag or a TOLLGATE_* variable win over the reference variable, and says so", () => {
    const env = { REDIS_SOCKET_TYPE: "tcp", REDIS_URL: "redis:6379", TOLLGATE_STORE: "memory", PORT: "9000" };
    const { settings, referenceEnv } = resolveSettings(["--http-addr", "127.0.0.1:0"], env);
    expect(settings.store).toBe("memory");
    expect(settings.httpAddr).toEqual({ host: "127.0.0.1", port: 0 });
    expect(referenceEnv.mapped).toEqual([]);
    expect(referenceEnv.ignored).toEqual([
      "REDIS_URL: TOLLGATE_STORE is set",
      "REDIS_SOCKET_TYPE: TOLLGATE_STORE is set",
      "PORT: --http-addr is given",
    ]);
  });

  it("builds single, TLS, Sentinel and Cluster store URLs with REDIS_AUTH, and hides the password in the report", () => {
    const tcp = { REDIS_SOCKET_TYPE: "tcp" };
    const store = (env: Record<string, string>) => loadSettings([], { ...tcp, ...env }).store;
    expect(store({ REDIS_URL: "r:6380", REDIS_AUTH: "p@ss" })).toBe("redis://:p%40ss@r:6380");
    expect(store({ REDIS_URL: "r:6380", REDIS_AUTH: "user:pw", REDIS_TLS: "true" })).toBe(
      "rediss://user:pw@r:6380",
    );
    expect(store({ REDIS_URL: "mymaster,s1:26379,s2:26379", REDIS_TYPE: "SENTINEL" })).toBe(
      "redis-sentinel://s1:26379,s2:26379/mymaster",
    );
    expect(store({ REDIS_URL: "n1:7000,n2:7001", REDIS_TYPE: "cluster" })).toBe(
      "redis-cluster://n1:7000,n2:7001",
    );
    const { referenceEnv } = resolveSettings([], { ...tcp, REDIS_URL: "r:1", REDIS_AUTH: "secret" });
    expect(referenceEnv.mapped).toEqual(["REDIS_URL+REDIS_SOCKET_TYPE+REDIS_AUTH → --store ***"]);
  });

  it("refuses what tollgate cannot honour, naming the variable and the fix", () => {
    const fails = (env: Record<string, string>, message: string) => {
      expect(() => loadSettings([], env)).toThrow(SettingsError);
      expect(() => loadSettings([], env)).toThrow(message);
    };
    fails(
      { REDIS_URL: "/var/run/redis.sock" },
      'REDIS_SOCKET_TYPE="" (envoyproxy/ratelimit): tollgate connects to Redis over TCP only',
    );
    fails(
      { REDIS_URL: "r:1", REDIS_SOCKET_TYPE: "tcp", REDIS_TYPE: "ring" },
      'REDIS_TYPE="ring" (envoyproxy/ratelimit): expected single, sentinel or cluster',
    );
    fails({ BACKEND_TYPE: "memcache" }, 'BACKEND_TYPE="memcache"');
    fails(
      { GRPC_UDS: "/tmp/rl.sock" },
      'GRPC_UDS="/tmp/rl.sock" (envoyproxy/ratelimit): tollgate listens on TCP only',
    );
    fails(
      { REDIS_URL: "a:1,b:2", REDIS_SOCKET_TYPE: "tcp", REDIS_TYPE: "cluster", REDIS_TLS: "true" },
      "TLS is supported for REDIS_TYPE=single only",
    );
    fails({ LOG_LEVEL: "verbose" }, 'LOG_LEVEL="verbose"');
    fails({ PORT: "http" }, 'PORT="http" (envoyproxy/ratelimit): expected a port number');
    fails({ SHADOW_MODE: "yes" }, 'SHADOW_MODE="yes" (envoyproxy/ratelimit): expected true or false');
  });

  it("maps ports, debug port, TLS, key prefix, headers, shadow mode and log format", () => {
    const s = loadSettings([], {
      PORT: "18080",
      GRPC_PORT: "18081",
      DEBUG_PORT: "16070",
      GRPC_SERVER_USE_TLS: "true",
      GRPC_SERVER_TLS_CERT: "/c.pem",
      GRPC_SERVER_TLS_KEY: "/k.pem",
      GRPC_CLIENT_TLS_CACERT: "/ca.pem",
      CACHE_KEY_PREFIX: "rl_",
      LIMIT_RESPONSE_HEADERS_ENABLED: "True",
      SHADOW_MODE: "1",
      LOG_LEVEL: "WARN",
      LOG_FORMAT: "json",
    });
    expect([s.httpAddr, s.grpcAddr, s.debugAddr]).toEqual([
      { host: "0.0.0.0", port: 18080 },
      { host: "0.0.0.0", port: 18081 },
      "0.0.0.0:16070",
    ]);
    expect([s.tlsCert, s.tlsKey, s.tlsClientCa]).toEqual(["/c.pem", "/k.pem", "/ca.pem"]);
    expect([s.keyPrefix, s.responseHeaders, s.shadowMode, s.logLevel, s.logFormat]).toEqual([
      "rl_",
      "draft03",
      true,
      "warn",
      "json",
    ]);
    expect(loadSettings([], { LIMIT_RESPONSE_HEADERS_ENABLED: "false" }).responseHeaders).toBe("off");
    expect(loadSettings([], { LOG_FORMAT: "text" }).logFormat).toBe("pretty");
  });

  it("maps the xDS provider's variables, Go durations and the backoff jitter", () => {
    const { settings: s } = resolveSettings([], {
      CONFIG_TYPE: "GRPC_XDS_SOTW",
      CONFIG_GRPC_XDS_SERVER_URL: "envoy-gateway:18001",
      CONFIG_GRPC_XDS_NODE_ID: "envoy-ratelimit",
      CONFIG_GRPC_XDS_SERVER_USE_TLS: "true",
      CONFIG_GRPC_XDS_SERVER_TLS_CACERT: "/certs/ca.crt",
      CONFIG_GRPC_XDS_CLIENT_TLS_CERT: "/certs/tls.crt",
      CONFIG_GRPC_XDS_CLIENT_TLS_KEY: "/certs/tls.key",
      XDS_CLIENT_BACKOFF_INITIAL_INTERVAL: "1m30s",
      XDS_CLIENT_BACKOFF_MAX_INTERVAL: "250ms",
      XDS_CLIENT_BACKOFF_RANDOM_FACTOR: "0.25",
      FORCE_START_WITHOUT_INITIAL_CONFIG: "true",
    });
    expect([s.xdsServer, s.xdsNodeId, s.xdsTls, s.xdsTlsCa, s.xdsTlsCert, s.xdsTlsKey]).toEqual([
      "envoy-gateway:18001",
      "envoy-ratelimit",
      true,
      "/certs/ca.crt",
      "/certs/tls.crt",
      "/certs/tls.key",
    ]);
    expect([s.xdsBackoffInitial, s.xdsBackoffMax, s.xdsBackoffJitter, s.xdsForceStart]).toEqual([
      90_000,
      250,
      25,
      true,
    ]);
    expect(loadSettings([], { CONFIG_TYPE: "GRPC_XDS_SOTW" }).xdsServer).toBe("localhost:18000");
    expect(
      loadSettings([], { CONFIG_TYPE: "GRPC_XDS_SOTW", XDS_CLIENT_BACKOFF_JITTER: "false" }).xdsBackoffJitter,
    ).toBe(0);
    expect(() =>
      loadSettings([], { CONFIG_TYPE: "GRPC_XDS_SOTW", XDS_CLIENT_BACKOFF_MAX_INTERVAL: "5 seconds" }),
    ).toThrow("expected a Go duration");
    const { referenceEnv } = resolveSettings([], { CONFIG_GRPC_XDS_NODE_ID: "x" });
    expect(referenceEnv.ignored).toEqual(["CONFIG_GRPC_XDS_NODE_ID: CONFIG_TYPE is not GRPC_XDS_SOTW"]);
  });
});

describe("Envoy Gateway's rate limit Deployment", () => {
  // The container env of envoyproxy/gateway's default envoy-ratelimit Deployment
  // (internal/infrastructure/kubernetes/ratelimit/testdata/deployments/default.yaml).
  const ENVOY_GATEWAY_ENV = {
    RUNTIME_ROOT: "/data",
    RUNTIME_SUBDIRECTORY: "ratelimit",
    RUNTIME_IGNOREDOTFILES: "true",
    RUNTIME_WATCH_ROOT: "false",
    LOG_LEVEL: "info",
    USE_STATSD: "true",
    STATSD_PORT: "9125",
    CONFIG_TYPE: "GRPC_XDS_SOTW",
    CONFIG_GRPC_XDS_SERVER_URL: "envoy-gateway:18001",
    CONFIG_GRPC_XDS_NODE_ID: "envoy-ratelimit",
    GRPC_SERVER_USE_TLS: "true",
    GRPC_SERVER_TLS_CERT: "/certs/tls.crt",
    GRPC_SERVER_TLS_KEY: "/certs/tls.key",
    GRPC_SERVER_TLS_CA_CERT: "/certs/ca.crt",
    CONFIG_GRPC_XDS_SERVER_USE_TLS: "true",
    CONFIG_GRPC_XDS_CLIENT_TLS_CERT: "/certs/tls.crt",
    CONFIG_GRPC_XDS_CLIENT_TLS_KEY: "/certs/tls.key",
    CONFIG_GRPC_XDS_SERVER_TLS_CACERT: "/certs/ca.crt",
    FORCE_START_WITHOUT_INITIAL_CONFIG: "true",
    REDIS_SOCKET_TYPE: "tcp",
    REDIS_URL: "redis.redis.svc:6379",
  };

  it("reads as the xDS client with TLS both ways, the same Redis, and gRPC over TLS without client certificates", () => {
    const { settings: s, referenceEnv } = resolveSettings([], ENVOY_GATEWAY_ENV);
    expect([
      s.xdsServer,
      s.xdsNodeId,
      s.xdsTls,
      s.xdsTlsCa,
      s.xdsTlsCert,
      s.xdsTlsKey,
      s.xdsForceStart,
    ]).toEqual([
      "envoy-gateway:18001",
      "envoy-ratelimit",
      true,
      "/certs/ca.crt",
      "/certs/tls.crt",
      "/certs/tls.key",
      true,
    ]);
    expect([s.tlsCert, s.tlsKey, s.tlsClientCa]).toEqual(["/certs/tls.crt", "/certs/tls.key", ""]);
    expect(s.store).toBe("redis://redis.redis.svc:6379");
    expect(s.httpAddr.port).toBe(8080);
    expect(referenceEnv.ignored.map((l) => l.split(":")[0]).sort()).toEqual(
      [
        "GRPC_SERVER_TLS_CA_CERT",
        "RUNTIME_IGNOREDOTFILES",
        "RUNTIME_WATCH_ROOT",
        "STATSD_PORT",
        "USE_STATSD",
      ].sort(),
    );
  });
});

describe("--compat envoyproxy", () => {
  it("sets fixed windows and no response headers when those are not given", () => {
    const s = loadSettings(["--compat", "envoyproxy"], {});
    expect([s.defaultAlgorithm, s.responseHeaders]).toEqual(["fixed_window", "off"]);
    const plain = loadSettings([], {});
    expect([plain.defaultAlgorithm, plain.responseHeaders]).toEqual(["gcra", "legacy"]);
  });

  it("keeps what is given by flag, TOLLGATE_* or the reference's own variable", () => {
    const given = loadSettings(["--compat", "envoyproxy", "--default-algorithm", "gcra"], {
      TOLLGATE_RESPONSE_HEADERS: "ietf",
    });
    expect([given.defaultAlgorithm, given.responseHeaders]).toEqual(["gcra", "ietf"]);
    const reference = loadSettings([], {
      TOLLGATE_COMPAT: "envoyproxy",
      LIMIT_RESPONSE_HEADERS_ENABLED: "true",
    });
    expect([reference.defaultAlgorithm, reference.responseHeaders]).toEqual(["fixed_window", "draft03"]);
  });
});
