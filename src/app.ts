/**
 * The composition root: settings → logger → metrics → config source → config → store → tenant
 * overrides → TLS files → HTTP → gRPC → debug listener → config watcher, each a named step of a
 * {@link Startup} (src/startup.ts). A step that fails closes what the earlier ones opened, last
 * first, and startApp rejects with a StartupError naming it; shutdown closes the same list in the
 * same order. What the HTTP and gRPC ports serve is built in app-servers.ts. Nothing else wires
 * components together.
 */
import type { AddressInfo } from "node:net";
import { appGrpcServer, appRoutes, readTls, type ServedParts } from "./app-servers.js";
import { createConfigSource } from "./config-source.js";
import { type ConfigState, loadConfigState, type ReloadAnswer, type ReloadStatus } from "./config-state.js";
import { startDebugListener } from "./debug-listener.js";
import { decisionLog } from "./decision-log.js";
import { Engine } from "./engine/decide.js";
import { matchTier } from "./engine/tiers.js";
import { type RuleSet, systemClock } from "./engine/types.js";
import type { Logger } from "./logger.js";
import { TollgateMetrics } from "./metrics/metrics.js";
import { HealthState } from "./protocol/health.js";
import { createHttpServer } from "./protocol/http.js";
import type { Settings } from "./settings.js";
import { type Closed, listenOrClose, Startup } from "./startup.js";
import { type BuiltStore, createStore } from "./store/create.js";
import { createTenantOverrides } from "./store/tenants/create.js";
import { TenantTierState } from "./tenant-tiers.js";
import { validationOptionsOf } from "./validation.js";

export type { ReloadStatus } from "./config-state.js";
export { StartupError } from "./startup.js";

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
  reload(): Promise<ReloadAnswer>;
  /** The last reload (undefined before the first): when, and its problems when it failed. */
  lastReload(): ReloadStatus | undefined;
  /**
   * NOT_SERVING, then close what startup opened, last first: the config watcher (and with it the
   * config source: no reload while draining), the debug listener, gRPC (GOAWAY, calls in flight
   * finish within drainTimeout), HTTP, the store.
   */
  shutdown(): Promise<void>;
}

/** How a cluster worker differs (src/workers/worker.ts); a single process passes none. */
export interface AppOptions {
  /** `/metrics` serves this instead of the process's own registry (the whole worker group). */
  readonly metricsText?: () => Promise<string>;
  /** This worker's slot (0..N-1): per-worker series `tollgate_worker_info` and `_requests_total`. */
  readonly workerSlot?: string;
}

/** Longest a close may take during a failed start or a shutdown (gRPC: drainTimeout plus this). */
const CLOSE_WITHIN_MS = 5_000;

/**
 * Start every part; resolves once both ports listen and gRPC health says SERVING. Rejects with a
 * StartupError naming the failed step after closing what the earlier steps opened.
 */
export async function startApp(settings: Settings, logger: Logger, options: AppOptions = {}): Promise<App> {
  const startup = new Startup({ closeWithinMs: CLOSE_WITHIN_MS });
  try {
    return await startSteps(startup, settings, logger, options);
  } catch (err) {
    logClosed(logger, await startup.close(), "after a failed start");
    throw err;
  }
}

async function startSteps(
  startup: Startup,
  settings: Settings,
  logger: Logger,
  options: AppOptions,
): Promise<App> {
  const clock = systemClock;
  const metrics = new TollgateMetrics({
    maxSeries: settings.metricsMaxSeries,
    clock,
    transport: settings.grpcTransport,
    ...(options.workerSlot === undefined ? {} : { worker: { slot: options.workerSlot, pid: process.pid } }),
  });
  const health = new HealthState();
  const defaultAlgorithm = settings.defaultAlgorithm;

  // Files (watched from the "config watcher" step on) or an xDS server, whose stream opens here.
  const source = await startup.step("config source", () => {
    const opened = createConfigSource(settings, logger);
    return { value: opened, close: () => opened.close() };
  });
  // Files: one load. xDS: the first push that validates (NACKing the others) or, with
  // --xds-force-start, the empty set at once.
  const config: ConfigState = await startup.step("config", async () => ({
    value: await loadConfigState({
      source,
      validation: validationOptionsOf(settings),
      clock,
      metrics,
      logger,
    }),
  }));
  const built: BuiltStore = await startup.step("store", () =>
    openStore(settings, { clock, metrics, logger }),
  );
  // Per-tenant tier overrides of the admin API over the tenants file: loaded, then followed
  // (Redis pub/sub) until shutdown. Memory store: per process.
  const tenantTiers = await startup.step("tenant overrides", async () => {
    const state = new TenantTierState({
      store: createTenantOverrides(settings, (err) =>
        logger.warn({ err }, "tenant overrides: reload failed, keeping the last table"),
      ),
      base: () => config.current().tiers,
    });
    try {
      await state.open();
    } catch (err) {
      await state.close().catch(() => {});
      throw err;
    }
    return { value: state, close: () => state.close() };
  });
  const tls = await startup.step("tls files", () => ({ value: readTls(settings) }));

  const engine = new Engine({
    rules: () => config.current().rules,
    store: built.store,
    clock,
    metrics,
    keyPrefix: settings.keyPrefix,
    headers: settings.responseHeaders,
    retryAfterJitterSec: settings.retryAfterJitter,
    globalShadowMode: settings.shadowMode,
    defaultAlgorithm,
    fallback: (domain, entries) => matchTier(tenantTiers.current(), domain, entries),
    ...decisionLog(logger, { rules: () => config.current().rules, clock }),
  });
  const parts: ServedParts = { settings, logger, clock, metrics, health, config, built, tenantTiers, engine };
  const routes = appRoutes(parts, options.metricsText);
  const onHttpError = (err: unknown) => logger.error({ err }, "http handler error");

  const httpAddress = await startup.step("http listen", async () => {
    const http = createHttpServer({ routes, maxBodyBytes: settings.maxMessageBytes, onError: onHttpError });
    return { value: await listenOrClose(http, settings.httpAddr), close: () => http.close() };
  });

  const grpcAddress = await startup.step("grpc listen", async () => {
    const grpc = appGrpcServer(parts, tls);
    return {
      value: await listenOrClose(grpc, settings.grpcAddr),
      close: () => grpc.drain(settings.drainTimeout),
      closeWithinMs: settings.drainTimeout + CLOSE_WITHIN_MS,
    };
  });

  // The debug routes (/rlconfig, /healthcheck, /metrics) of `routes` on a port of their own.
  const debug = await startup.step("debug listen", async () => {
    const listener = await startDebugListener({ addr: settings.debugAddr, routes, onError: onHttpError });
    return { value: listener, ...(listener === undefined ? {} : { close: () => listener.close() }) };
  });

  // Closing the source stops its watching (files, tenants file, xDS pushes); the "config source"
  // step's close then finds nothing left to do.
  await startup.step("config watcher", async () => {
    const close = () => source.close();
    await source
      .watch(() => config.reload())
      .catch((err: unknown) => {
        close();
        throw err;
      });
    return { value: undefined, close };
  });
  health.setServing(true);

  let closing: Promise<void> | undefined;
  return {
    grpcAddress,
    httpAddress,
    debugAddress: debug?.address,
    health,
    metrics,
    rules: () => config.current().rules,
    reload: () => config.reload(),
    lastReload: () => config.lastReload(),
    shutdown() {
      closing ??= (async () => {
        health.setServing(false);
        logClosed(logger, await startup.close(), "at shutdown");
      })();
      return closing;
    },
  };
}

/** One debug line per closed step, a warning for a close that failed or timed out. */
function logClosed(logger: Logger, closed: readonly Closed[], when: string): void {
  for (const c of closed)
    if (c.ok) logger.debug({ step: c.step }, `closed ${when}`);
    else logger.warn({ step: c.step, err: c.error, timedOut: c.timedOut === true }, `close failed ${when}`);
}

/** The store step: build it, wait until it serves (or serves degraded), start its heartbeat. */
async function openStore(settings: Settings, deps: Parameters<typeof createStore>[1]) {
  const built = createStore(settings, deps);
  try {
    await built.store.ready();
    await built.start();
  } catch (err) {
    await built.close();
    throw err;
  }
  return { value: built, close: () => built.close() };
}
