/**
 * What a serving process does around the app, alone or as a cluster worker: start it (explaining a
 * bad config), and drain on SIGTERM/SIGINT (a second signal exits at once), reload on SIGHUP.
 */
import { type App, type AppOptions, StartupError, startApp } from "./app.js";
import { ConfigError, formatProblem } from "./config/errors.js";
import type { Logger } from "./logger.js";
import type { Settings } from "./settings.js";

/**
 * Start the app; on failure log why in one line naming the step (a bad config also gets one line per
 * problem before it) and return undefined. By then startApp has closed whatever it had opened, so the
 * process can exit.
 */
export async function startOrReport(
  settings: Settings,
  logger: Logger,
  options?: AppOptions,
): Promise<App | undefined> {
  try {
    return await startApp(settings, logger, options);
  } catch (err) {
    const step = err instanceof StartupError ? err.step : "startup";
    const cause = err instanceof StartupError ? err.cause : err;
    if (cause instanceof ConfigError) {
      for (const p of cause.problems) logger.error(formatProblem(p));
      logger.error(
        { step },
        `invalid config at ${settings.config}: ${cause.problems.length} problem(s); not starting`,
      );
    } else {
      const why = cause instanceof Error ? cause.message : String(cause);
      logger.error({ step, err: cause }, `failed to start at step "${step}": ${why}; not starting`);
    }
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
