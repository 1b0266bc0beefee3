/**
 * The composition root: settings → logger → metrics → store → rules → engine → servers, and the
 * ordered close. Nothing else wires components together.
 */

import { readFileSync } from "node:fs";
import type { AddressInfo } from "node:net";
import { describeRules } from "./config/describe.js";
import { ConfigError, formatProblem } from "./config/errors.js";
import { describeTiers } from "./config/sections/tiers.js";
import { loadServingConfig } from "./config/serving.js";
import { createConfigSource } from "./config-source.js";
import { startDebugListener } from "./debug-listener.js";
import { Engine } from "./engine/decide.js";
import { matchTier, tierOf } from "./engine/tiers.js";
import { type Algorithm, type RuleSet, systemClock } from "./engine/types.js";
import type { Logger } from "./logger.js";
import { TollgateMetrics } from "./metrics/metrics.js";
import type { QueryBounds } from "./protocol/codec.js";
import { createCheckMethod } from "./protocol/ext-authz.js";
import { createGrpcServer, type GrpcServer, type GrpcTransport } from "./protocol/grpc/server.js";
import { HealthState, healthMethod } from "./protocol/health.js";
import { createHttpServer, type HttpServer } from "./protocol/http.js";
import { quotaRoutes } from "./protocol/quota.js";
import { rlsMethod } from "./protocol/rls.js";
import { httpRoutes } from "./protocol/routes.js";
import type { Settings } from "./settings.js";
import { createStore } from "./store/create.js";
import { validationOptionsOf } from "./validation.js";

export interface App {
  readonly grpcAddress: AddressInfo;
  readonly httpAddress: AddressInfo;
  /** The debug listener (`--debug-addr`), when configured. */
  readonly debugAddress: AddressInfo | undefined;
  readonly health: HealthState;
  readonly metrics: TollgateMetrics;
  /** The rules in force. */
  rules(): RuleSet;
  /** Load the config (and tenants file) again; on failure keep the old rules and return the problems. */
  reload(): Promise<{ ok: true } | { ok: false; problems: string[] }>;
  /** The last reload (undefined before the first): when, and its problems when it failed. */
  lastReload(): ReloadStatus | undefined;
  /** NOT_SERVING, GOAWAY, let in-flight calls finish (bounded by drainTimeout), close the store. */
  shutdown(): Promise<void>;
}

/** How a cluster worker differs (src/workers/worker.ts); a single process passes none. */
export interface AppOptions {
  /** `/metrics` serves this instead of the process's own registry (the whole worker group). */
  readonly metricsText?: () => Promise<string>;
  /** This worker's slot (0..N-1): per-worker series `tollgate_worker_info` and `_requests_total`. */
  readonly workerSlot?: string;
}

/** Outcome of the last reload, shown on `/rlconfig`. */
export interface ReloadStatus {
  readonly at: Date;
  readonly ok: boolean;
  readonly problems: readonly string[];
}

export async function startApp(settings: Settings, logger: Logger, options: AppOptions = {}): Promise<App> {
  const clock = systemClock;
  const metrics = new TollgateMetrics({
    maxSeries: settings.metricsMaxSeries,
    clock,
    transport: settings.grpcTransport,
    ...(options.workerSlot === undefined ? {} : { worker: { slot: options.workerSlot, pid: process.pid } }),
  });
  const health = new HealthState();
  /** Descriptor rules, ext_authz extraction rules and tiers come from one load and are swapped together. */
  const source = createConfigSource(settings, logger);
  const loadAll = () => loadServingConfig(source.read, validationOptionsOf(settings));

  let loaded = await source.first(loadAll).catch((err: unknown) => {
    source.close();
    throw err;
  });
  metrics.reload("success");
  logger.info(
    {
      config: source.name,
      domains: loaded.rules.domains.size,
      files: loaded.rules.files.length,
      tenants: loaded.tiers.tenants.size,
    },
    "config loaded",
  );

  const built = createStore(
    { ...settings, onStoreError: settings.onStoreError as "local" | "allow" | "deny" | "error" },
    { clock, metrics, logger },
  );
  await built.store.ready();
  built.start().catch((err: unknown) => logger.warn({ err }, "instance heartbeat failed to start"));

  const engine = new Engine({
    rules: () => loaded.rules,
    store: built.store,
    clock,
    metrics,
    keyPrefix: settings.keyPrefix,
    headers: settings.responseHeaders as "legacy" | "draft03" | "ietf" | "off",
    retryAfterJitterSec: settings.retryAfterJitter,
    globalShadowMode: settings.shadowMode,
    defaultAlgorithm: settings.defaultAlgorithm as Algorithm,
    fallback: (domain, entries) => matchTier(loaded.tiers, domain, entries),
  });
  const bounds: QueryBounds = {
    maxDescriptors: settings.maxDescriptors,
    maxEntries: settings.maxEntries,
    maxKeyValueBytes: settings.maxKeyValueBytes,
  };
  const decide = (q: Parameters<Engine["shouldRateLimit"]>[0]) => engine.shouldRateLimit(q);
  // The HTTP routes take a promise; the gRPC method takes the answer itself when it is ready at once.
  const decideLater = async (q: Parameters<Engine["shouldRateLimit"]>[0]) => engine.shouldRateLimit(q);

  const grpc: GrpcServer = createGrpcServer({
    methods: [
      rlsMethod(decide, bounds),
      createCheckMethod({ engine, rules: () => loaded.extAuthz }),
      healthMethod(health),
    ],
    maxMessageBytes: settings.maxMessageBytes,
    maxInFlight: settings.maxInFlight,
    transport: settings.grpcTransport as GrpcTransport,
    ...(settings.tlsCert
      ? {
          tls: {
            cert: readFileSync(settings.tlsCert),
            key: readFileSync(settings.tlsKey),
            ...(settings.tlsClientCa ? { clientCa: readFileSync(settings.tlsClientCa) } : {}),
          },
        }
      : {}),
    onError: (err, where) => logger.debug({ err, where }, "grpc peer error"),
    events: metrics,
  });
  let last: ReloadStatus | undefined;
  const reloadLines = (): string[] => {
    if (last === undefined) return [];
    const when = `${last.ok ? "ok" : "FAILED, serving the previous rules"} at ${last.at.toISOString()}`;
    return [`# last reload: ${when}`, ...last.problems.map((p) => `#   ${p}`)];
  };
  const routes = new Map([
    ...httpRoutes({
      health,
      decide: decideLater,
      bounds,
      metrics: options.metricsText
        ? { text: options.metricsText, contentType: metrics.contentType }
        : metrics,
      rulesText: () => [...describeRules(loaded.rules), ...describeTiers(loaded.tiers), ...reloadLines()],
      storeStatus: () => (built.guard ? built.guard.status() : { kind: built.store.kind }),
    }),
    ...quotaRoutes({
      decide: decideLater,
      bucketKeys: (q) => engine.bucketKeys(q),
      reset: (keys) => built.store.reset(keys),
      resetToken: settings.resetToken,
      bounds,
      tierOf: (domain, entries) => {
        const tenant = entries.find((e) => e.key === loaded.tiers.tables.get(domain)?.tenantKey);
        return tenant === undefined ? undefined : tierOf(loaded.tiers, domain, tenant.value);
      },
    }),
  ]);
  const onHttpError = (err: unknown) => logger.error({ err }, "http handler error");
  const http: HttpServer = createHttpServer({
    routes,
    maxBodyBytes: settings.maxMessageBytes,
    onError: onHttpError,
  });
  const grpcAddress = await grpc.listen(settings.grpcAddr.host, settings.grpcAddr.port);
  const httpAddress = await http.listen(settings.httpAddr.host, settings.httpAddr.port);
  const debug = await startDebugListener({ addr: settings.debugAddr, routes, onError: onHttpError });
  health.setServing(true);

  const reloadOnce = async (): Promise<{ ok: true } | { ok: false; problems: string[] }> => {
    try {
      loaded = await loadAll();
      metrics.reload("success");
      last = { at: new Date(clock.now()), ok: true, problems: [] };
      logger.info(
        {
          domains: loaded.rules.domains.size,
          files: loaded.rules.files.length,
          tenants: loaded.tiers.tenants.size,
        },
        "config reloaded",
      );
      return { ok: true };
    } catch (err) {
      metrics.reload("failure");
      const problems = err instanceof ConfigError ? err.problems.map(formatProblem) : [String(err)];
      last = { at: new Date(clock.now()), ok: false, problems };
      logger.error({ problems }, "config reload failed; keeping the previous rules");
      return { ok: false, problems };
    }
  };
  // One reload at a time: SIGHUP and the watcher queue behind each other, so the newest files win.
  let reloading: Promise<unknown> = Promise.resolve();
  const reload = () => {
    const next = reloading.then(reloadOnce);
    reloading = next;
    return next;
  };
  await source.watch(reload);

  let closing: Promise<void> | undefined;
  return {
    grpcAddress,
    httpAddress,
    debugAddress: debug?.address,
    health,
    metrics,
    rules: () => loaded.rules,
    reload,
    lastReload: () => last,
    shutdown() {
      closing ??= (async () => {
        source.close();
        health.setServing(false);
        await grpc.drain(settings.drainTimeout);
        await http.close();
        await debug?.close();
        await built.close();
      })();
      return closing;
    },
  };
}
