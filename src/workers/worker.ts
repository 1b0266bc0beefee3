/**
 * One cluster worker (`--workers N`): runs the whole app on the listen sockets it shares with the
 * other workers (node:cluster hands it accepted connections), and talks to the primary over IPC:
 * it reports when it listens, drains or reloads when the primary says so, and serves `/metrics` as
 * the primary's aggregate of every worker (src/workers/aggregate.ts).
 */
import type { App } from "../app.js";
import { drainer, handleSignals, startOrReport } from "../lifecycle.js";
import type { Logger } from "../logger.js";
import type { Settings } from "../settings.js";
import {
  type CollectReply,
  type CollectRequest,
  type ControlMessage,
  isMessage,
  type MetricsReply,
  type MetricsRequest,
  type ReadyMessage,
  SLOT_ENV,
} from "./messages.js";

/** A `/metrics` scrape fails after this long without the primary's aggregate (prom-client's own bound is 5 s). */
const METRICS_TIMEOUT_MS = 6_000;

function send(message: ReadyMessage | MetricsRequest | CollectReply): void {
  process.send?.(message, undefined, {}, () => {});
}

/** Asks the primary for the group's metrics text. */
function groupMetrics(): { text: () => Promise<string>; onReply: (m: MetricsReply) => void } {
  const pending = new Map<number, (reply: MetricsReply | undefined) => void>();
  let nextId = 0;
  return {
    text: () =>
      new Promise((resolve, reject) => {
        const id = nextId++;
        const timer = setTimeout(() => settle(undefined), METRICS_TIMEOUT_MS);
        const settle = (reply: MetricsReply | undefined) => {
          clearTimeout(timer);
          pending.delete(id);
          if (reply?.text !== undefined) resolve(reply.text);
          else
            reject(
              new Error(`worker metrics aggregation failed: ${reply?.error ?? "no answer from the primary"}`),
            );
        };
        pending.set(id, settle);
        send({ type: "tollgate:metrics-request", id });
      }),
    onReply: (m) => pending.get(m.id)?.(m),
  };
}

/** Runs the app in this worker; returns 0 once it listens (1, and the process exits, if it cannot start). */
export async function runWorker(settings: Settings, base: Logger): Promise<number> {
  const slot = process.env[SLOT_ENV] ?? "0";
  const logger = base.child({ worker: Number(slot), pid: process.pid });
  const metrics = groupMetrics();
  let app: App | undefined;
  let stop: ((signal: string) => void) | undefined;
  let drainAsked: string | undefined;
  let draining = false;
  process.on("message", (m: unknown) => {
    if (isMessage<MetricsReply>(m, "tollgate:metrics-reply")) metrics.onReply(m);
    else if (isMessage<CollectRequest>(m, "tollgate:metrics-collect")) {
      const { id } = m;
      (app?.metrics.registry.getMetricsAsJSON() ?? Promise.reject(new Error("not started"))).then(
        (json) => send({ type: "tollgate:metrics-json", id, metrics: json }),
        (err: unknown) => send({ type: "tollgate:metrics-json", id, error: String(err) }),
      );
    } else if (isMessage<ControlMessage>(m, "tollgate:reload")) void app?.reload();
    else if (isMessage<ControlMessage>(m, "tollgate:drain") && drainAsked === undefined) {
      // The same signal may also have reached this worker directly (Ctrl-C signals the whole process
      // group): the primary's word is not a second signal.
      drainAsked = m.signal;
      if (!draining) stop?.(m.signal);
    }
  });
  app = await startOrReport(settings, logger, { metricsText: metrics.text, workerSlot: slot });
  if (app === undefined) process.exit(1);
  const drain = drainer(app, logger);
  stop = (signal) => {
    draining = true;
    drain(signal);
  };
  handleSignals(app, (signal) => stop?.(signal));
  send({ type: "tollgate:ready", grpc: app.grpcAddress, http: app.httpAddress });
  logger.info("worker listening");
  if (drainAsked !== undefined) stop(drainAsked);
  return 0;
}
