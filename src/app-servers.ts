/**
 * What the app serves, built over the parts app.ts has started: the HTTP routes (probes, `POST
 * /json`, `/metrics`, `/rlconfig`, the quota and tenant admin APIs; the debug listener serves some of
 * the same map) and the gRPC server (RLS, ext_authz, health, RLQS) with its transport limits and TLS.
 */
import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import type { ConfigState } from "./config-state.js";
import type { Engine } from "./engine/decide.js";
import { tierOf } from "./engine/tiers.js";
import { type Clock, systemTimers } from "./engine/types.js";
import type { Logger } from "./logger.js";
import type { TollgateMetrics } from "./metrics/metrics.js";
import { adminTenantRoutes } from "./protocol/admin-tenants.js";
import type { QueryBounds } from "./protocol/codec.js";
import { createCheckMethod } from "./protocol/ext-authz.js";
import { createGrpcServer, type GrpcServer, type TlsOptions } from "./protocol/grpc/server.js";
import { type HealthState, healthMethod } from "./protocol/health.js";
import type { Route } from "./protocol/http.js";
import { quotaRoutes } from "./protocol/quota.js";
import { rlqsMethod } from "./protocol/rlqs/service.js";
import { rlsMethod } from "./protocol/rls.js";
import { httpRoutes } from "./protocol/routes.js";
import type { Settings } from "./settings.js";
import type { BuiltStore } from "./store/create.js";
import { MemoryUsageBoard } from "./store/rlqs/memory-board.js";
import type { TenantTierState } from "./tenant-tiers.js";

/** The started parts the servers are built over. */
export interface ServedParts {
  readonly settings: Settings;
  readonly logger: Logger;
  readonly clock: Clock;
  readonly metrics: TollgateMetrics;
  readonly health: HealthState;
  readonly config: ConfigState;
  readonly built: BuiltStore;
  readonly tenantTiers: TenantTierState;
  readonly engine: Engine;
}

/** The input bounds of a query, the same on every port. */
function queryBounds(settings: Settings): QueryBounds {
  return {
    maxDescriptors: settings.maxDescriptors,
    maxEntries: settings.maxEntries,
    maxKeyValueBytes: settings.maxKeyValueBytes,
  };
}

/**
 * The HTTP routes of the main port. `metricsText`: what `/metrics` serves instead of the process's
 * own registry (a cluster worker's whole group).
 */
export function appRoutes(p: ServedParts, metricsText?: () => Promise<string>): Map<string, Route> {
  const { settings, logger, metrics, health, config, built, tenantTiers, engine } = p;
  const bounds = queryBounds(settings);
  // The HTTP routes take a promise; the gRPC method takes the answer itself when it is ready at once.
  const decideLater = async (q: Parameters<Engine["shouldRateLimit"]>[0]) => engine.shouldRateLimit(q);

  const routes = new Map([
    ...httpRoutes({
      health,
      decide: decideLater,
      bounds,
      metrics: metricsText ? { text: metricsText, contentType: metrics.contentType } : metrics,
      rulesText: () => [...config.describe(), ...tenantTiers.describe()],
      storeStatus: () => (built.guard ? built.guard.status() : { kind: built.store.kind }),
      rejected: (reason) => metrics.rejected(reason),
    }),
    ...quotaRoutes({
      decide: decideLater,
      bucketKeys: (q) => engine.bucketKeys(q),
      reset: (keys) => built.store.reset(keys),
      adminToken: settings.adminToken,
      bounds,
      tierOf: (domain, entries) => {
        const tiers = tenantTiers.current();
        const tenant = entries.find((e) => e.key === tiers.tables.get(domain)?.tenantKey);
        return tenant === undefined ? undefined : tierOf(tiers, domain, tenant.value);
      },
    }),
    ...adminTenantRoutes({
      tiers: tenantTiers,
      adminToken: settings.adminToken,
      maxTenantBytes: settings.maxKeyValueBytes,
      audit: (c) =>
        logger.info(
          {
            audit: "tenant_tier",
            action: c.action,
            who: { credential: "admin-token", remote: c.remote },
            tenant: c.tenant,
            old: c.old ?? null,
            new: c.new ?? null,
          },
          "tenant tier override changed",
        ),
    }),
  ]);
  return routes;
}

/** The gRPC server (not listening yet): RLS, ext_authz, health and RLQS, on h2c or `tls`. */
export function appGrpcServer(p: ServedParts, tls: TlsOptions | undefined): GrpcServer {
  const { settings, logger, clock, metrics, health, config, built, engine } = p;
  const bounds = queryBounds(settings);
  // The `local` failure policy's RLQS board: this instance's Envoys only, limits divided by instances.
  const rlqsLocalBoard = new MemoryUsageBoard({ clock });
  return createGrpcServer({
    methods: [
      rlsMethod((q) => engine.shouldRateLimit(q), bounds),
      createCheckMethod({ engine, rules: () => config.current().extAuthz }),
      healthMethod(health),
    ],
    streamMethods: [
      rlqsMethod({
        config: () => config.current(),
        board: built.rlqsBoard,
        localBoard: rlqsLocalBoard,
        instances: () => built.instances(),
        clock,
        instanceId: randomUUID(),
        timers: systemTimers,
        streamIdleMs: settings.rlqsStreamIdleTimeout,
        defaultPolicy: settings.onStoreError,
        keyPrefix: settings.keyPrefix,
        events: metrics.rlqs,
        streamEvents: metrics.rlqs,
        onError: (err, where) => logger.error({ err, where }, "rlqs stream error"),
      }),
    ],
    maxMessageBytes: settings.maxMessageBytes,
    maxInFlight: settings.maxInFlight,
    transport: settings.grpcTransport,
    maxConnections: settings.grpcMaxConnections,
    maxBufferedBytes: settings.grpcMaxBufferedBytes,
    maxStreamsPerConnection: settings.grpcMaxStreamingCalls,
    maxStreamBufferedBytes: settings.grpcMaxStreamUnreadBytes,
    limits: {
      maxStreams: settings.grpcMaxConcurrentStreams,
      connectionWindow: settings.grpcConnectionWindow,
      maxUnsentBytes: settings.grpcMaxUnsentBytes,
      resetBurst: settings.grpcResetBurst,
      resetRate: settings.grpcResetRate,
      handshakeTimeoutMs: settings.grpcHandshakeTimeout,
      requestTimeoutMs: settings.grpcRequestTimeout,
    },
    ...(tls === undefined ? {} : { tls }),
    onError: (err, where) => logger.debug({ err, where }, "grpc peer error"),
    events: metrics,
  });
}

/** The gRPC TLS files (`--tls-cert`, `--tls-key`, `--tls-client-ca`), or undefined for h2c. */
export function readTls(settings: Settings): TlsOptions | undefined {
  if (!settings.tlsCert) return undefined;
  return {
    cert: readFileSync(settings.tlsCert),
    key: readFileSync(settings.tlsKey),
    ...(settings.tlsClientCa ? { clientCa: readFileSync(settings.tlsClientCa) } : {}),
  };
}
