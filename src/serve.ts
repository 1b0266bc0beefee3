/**
 * `tollgate serve`: settings, logger, app, signals. SIGTERM/SIGINT drain and exit 0 (a second signal
 * exits at once); SIGHUP reloads the config. With `--workers N` (N ≠ 1) this process becomes a
 * node:cluster primary (src/workers/primary.ts) and its workers run the app (src/workers/worker.ts).
 */
import cluster from "node:cluster";
import { availableParallelism } from "node:os";
import { drainer, handleSignals, redactedStore, startOrReport } from "./lifecycle.js";
import { createLogger, loggerOptionsOf } from "./logger.js";
import { resolveSettings, type Settings, SettingsError } from "./settings.js";
import { runPrimary } from "./workers/primary.js";
import { runWorker } from "./workers/worker.js";

/**
 * Worker processes to fork, or undefined for one process (`--workers 1`, no cluster primary).
 * `0` is one per CPU. The in-process store refuses anything but 1: its buckets are per process.
 */
export function workerCount(settings: Settings): number | undefined {
  if (settings.workers === 1) return undefined;
  if (settings.store === "memory") {
    const n = settings.workers === 0 ? "0 (one per CPU)" : String(settings.workers);
    throw new SettingsError(
      `--workers ${n} needs a Redis store (--store redis://…): the memory store keeps its buckets in each process, so every worker would admit the full limit (limits × workers)`,
    );
  }
  return settings.workers === 0 ? availableParallelism() : settings.workers;
}

export async function serve(argv: readonly string[]): Promise<number> {
  const { settings, referenceEnv } = resolveSettings(argv);
  const workers = workerCount(settings);
  const logger = await createLogger(loggerOptionsOf(settings));
  if (referenceEnv.mapped.length + referenceEnv.ignored.length > 0)
    logger.info(referenceEnv, "envoyproxy/ratelimit environment read");
  if (workers !== undefined) {
    if (cluster.isPrimary) return runPrimary(settings, logger, workers);
    return runWorker(settings, logger);
  }
  const app = await startOrReport(settings, logger);
  if (app === undefined) return 1;
  logger.info(
    {
      grpc: `${app.grpcAddress.address}:${app.grpcAddress.port}`,
      http: `${app.httpAddress.address}:${app.httpAddress.port}`,
      ...(app.debugAddress === undefined
        ? {}
        : { debug: `${app.debugAddress.address}:${app.debugAddress.port}` }),
      store: redactedStore(settings),
    },
    "tollgate ready",
  );
  handleSignals(app, drainer(app, logger));
  return 0;
}
