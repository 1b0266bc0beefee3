/**
 * What a serving process does around the app, alone or as a cluster worker: start it (explaining a
 * bad config), and drain on SIGTERM/SIGINT (a second signal exits at once), reload on SIGHUP.
 */
import { type App, type AppOptions, startApp } from "./app.js";
import { ConfigError, formatProblem } from "./config/errors.js";
import type { Logger } from "./logger.js";
import type { Settings } from "./settings.js";

/** Start the app; on failure log why (each config problem on its own line) and return undefined. */
export async function startOrReport(
  settings: Settings,
  logger: Logger,
  options?: AppOptions,
): Promise<App | undefined> {
  try {
    return await startApp(settings, logger, options);
  } catch (err) {
    if (err instanceof ConfigError) {
      for (const p of err.problems) logger.error(formatProblem(p));
      logger.error(`invalid config at ${settings.config}: ${err.problems.length} problem(s); not starting`);
    } else logger.error({ err }, "failed to start");
    return undefined;
  }
}

/** The store setting as it may be logged (no password). */
export function redactedStore(settings: Settings): string {
  return settings.store === "memory" ? "memory" : settings.store.replace(/\/\/[^@/]*@/, "//***@");
}

/** Drains `app` and exits; `stop(signal)` a second time exits 1 at once. */
export function drainer(app: App, logger: Logger): (signal: string) => void {
  let stopping = false;
  return (signal) => {
    if (stopping) {
      logger.warn({ signal }, "second signal: exiting now");
      process.exit(1);
    }
    stopping = true;
    logger.info({ signal }, "draining");
    app.shutdown().then(
      () => {
        logger.info("stopped");
        process.exit(0);
      },
      (err: unknown) => {
        logger.error({ err }, "shutdown failed");
        process.exit(1);
      },
    );
  };
}

/** SIGTERM/SIGINT drain through `stop`; SIGHUP reloads the config. */
export function handleSignals(app: App, stop: (signal: string) => void): void {
  process.on("SIGTERM", () => stop("SIGTERM"));
  process.on("SIGINT", () => stop("SIGINT"));
  process.on("SIGHUP", () => {
    void app.reload();
  });
}
