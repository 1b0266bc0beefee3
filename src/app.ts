/**
 * The composition root: settings → logger → metrics → store → rules → engine → servers, and the
 * ordered close. Nothing else wires components together.
 */

import { readFileSync } from "node:fs";
import type { AddressInfo } from "node:net";
import { describeRules } from "./config/describe.js";
import { ConfigError, formatProblem } from "./config/errors.js";
import { loadConfig } from "./config/load.js";
import { EXT_AUTHZ_SCHEMA, extAuthzRulesOf } from "./config/sections/ext-authz.js";
import { Engine } from "./engine/decide.js";
import type { ExtAuthzRules } from "./engine/extract/rules.js";
import { type RuleSet, systemClock } from "./engine/types.js";
import type { Logger } from "./logger.js";
import { TollgateMetrics } from "./metrics/metrics.js";
import type { QueryBounds } from "./protocol/codec.js";
import { createCheckMethod } from "./protocol/ext-authz.js";
import { createGrpcServer, type GrpcServer } from "./protocol/grpc/server.js";
import { HealthState, healthMethod } from "./protocol/health.js";
import { createHttpServer, type HttpServer } from "./protocol/http.js";
import { rlsMethod } from "./protocol/rls.js";
import { httpRoutes } from "./protocol/routes.js";
import type { Settings } from "./settings.js";
import { createStore } from "./store/create.js";

export interface App {
  readonly grpcAddress: AddressInfo;
  readonly httpAddress: AddressInfo;
  readonly health: HealthState;
  readonly metrics: TollgateMetrics;
  /** The rules in force. */
  rules(): RuleSet;
  /** Load the config again; on failure keep the old rules and return the problems. */
  reload(): Promise<{ ok: true } | { ok: false; problems: string[] }>;
  /** NOT_SERVING, GOAWAY, let in-flight calls finish (bounded by drainTimeout), close the store. */
  shutdown(): Promise<void>;
}

export async function startApp(settings: Settings, logger: Logger): Promise<App> {
  const clock = systemClock;
  const metrics = new TollgateMetrics({ maxSeries: settings.metricsMaxSeries, clock });
  const health = new HealthState();
  const loadOpts = {
    defaultAlgorithm: settings.defaultAlgorithm as "gcra" | "fixed_window",
    schema: EXT_AUTHZ_SCHEMA,
  };
  /** Descriptor rules and ext_authz extraction rules come from one load and are swapped together. */
  const loadAll = async (): Promise<{ rules: RuleSet; extAuthz: ExtAuthzRules }> => {
    const load = await loadConfig(settings.config, loadOpts);
    return {
      rules: load.ruleSet,
      extAuthz: extAuthzRulesOf(load, { maxValueBytes: settings.maxKeyValueBytes }),
    };
  };

  let loaded = await loadAll();
  metrics.reload("success");
  logger.info(
    { config: settings.config, domains: loaded.rules.domains.size, files: loaded.rules.files.length },
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
    defaultAlgorithm: loadOpts.defaultAlgorithm,
  });
  const bounds: QueryBounds = {
    maxDescriptors: settings.maxDescriptors,
    maxEntries: settings.maxEntries,
    maxKeyValueBytes: settings.maxKeyValueBytes,
  };
  const decide = (q: Parameters<Engine["shouldRateLimit"]>[0]) => engine.shouldRateLimit(q);

  const grpc: GrpcServer = createGrpcServer({
    methods: [
      rlsMethod(decide, bounds),
      createCheckMethod({ engine, rules: () => loaded.extAuthz }),
      healthMethod(health),
    ],
    maxMessageBytes: settings.maxMessageBytes,
    maxInFlight: settings.maxInFlight,
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
  });
  const http: HttpServer = createHttpServer({
    routes: httpRoutes({
      health,
      decide,
      bounds,
      metrics,
      rulesText: () => describeRules(loaded.rules),
      storeStatus: () => (built.guard ? built.guard.status() : { kind: built.store.kind }),
    }),
    maxBodyBytes: settings.maxMessageBytes,
    onError: (err) => logger.error({ err }, "http handler error"),
  });
  const grpcAddress = await grpc.listen(settings.grpcAddr.host, settings.grpcAddr.port);
  const httpAddress = await http.listen(settings.httpAddr.host, settings.httpAddr.port);
  health.setServing(true);

  let closing: Promise<void> | undefined;
  return {
    grpcAddress,
    httpAddress,
    health,
    metrics,
    rules: () => loaded.rules,
    async reload() {
      try {
        loaded = await loadAll();
        metrics.reload("success");
        logger.info(
          { domains: loaded.rules.domains.size, files: loaded.rules.files.length },
          "config reloaded",
        );
        return { ok: true };
      } catch (err) {
        metrics.reload("failure");
        const problems = err instanceof ConfigError ? err.problems.map(formatProblem) : [String(err)];
        logger.error({ problems }, "config reload failed; keeping the previous rules");
        return { ok: false, problems };
      }
    },
    shutdown() {
      closing ??= (async () => {
        health.setServing(false);
        await grpc.drain(settings.drainTimeout);
        await http.close();
        await built.close();
      })();
      return closing;
    },
  };
}
