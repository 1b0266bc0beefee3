/**
 * `tollgate serve`: settings, logger, app, signals. SIGTERM/SIGINT drain and exit 0 (a second signal
 * exits at once); SIGHUP reloads the config.
 */
import { startApp } from "./app.js";
import { ConfigError, formatProblem } from "./config/errors.js";
import { createLogger } from "./logger.js";
import { loadSettings } from "./settings.js";

export async function serve(argv: readonly string[]): Promise<number> {
  const settings = loadSettings(argv);
  const logger = createLogger({ level: settings.logLevel });
  let app: Awaited<ReturnType<typeof startApp>>;
  try {
    app = await startApp(settings, logger);
  } catch (err) {
    if (err instanceof ConfigError) {
      for (const p of err.problems) logger.error(formatProblem(p));
      logger.error(`invalid config at ${settings.config}: ${err.problems.length} problem(s); not starting`);
    } else logger.error({ err }, "failed to start");
    return 1;
  }
  logger.info(
    {
      grpc: `${app.grpcAddress.address}:${app.grpcAddress.port}`,
      http: `${app.httpAddress.address}:${app.httpAddress.port}`,
      store: settings.store === "memory" ? "memory" : settings.store.replace(/\/\/[^@/]*@/, "//***@"),
    },
    "tollgate ready",
  );
  let stopping = false;
  const stop = (signal: string) => {
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
  process.on("SIGTERM", () => stop("SIGTERM"));
  process.on("SIGINT", () => stop("SIGINT"));
  process.on("SIGHUP", () => {
    void app.reload();
  });
  return 0;
}
