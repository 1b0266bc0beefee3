/**
 * The node:cluster primary of `--workers N`: forks N workers that share the gRPC and HTTP listen
 * sockets (Node's default round-robin scheduling on Linux: the primary accepts and hands each new
 * connection to the next worker), supervises them and runs no app itself.
 *
 * - "tollgate ready" is logged once, when every worker listens, with the shared addresses.
 * - SIGTERM/SIGINT: every worker drains (told over IPC), then exit 0; a second signal SIGKILLs them
 *   and exits 1. SIGHUP: every worker reloads its config.
 * - A worker that dies unexpectedly is restarted after a backoff (250 ms doubling to 10 s, reset once
 *   it has run 10 s). A worker that dies before it listens at first boot stops the group (exit 1,
 *   e.g. a bad config); later, 5 such boot failures in a row do.
 * - `/metrics` on any worker asks the primary, which aggregates every worker's registry.
 */
import cluster, { type Worker } from "node:cluster";
import { redactedStore } from "../lifecycle.js";
import type { Logger } from "../logger.js";
import type { Settings } from "../settings.js";
import { groupMetrics } from "./aggregate.js";
import {
  isMessage,
  type MetricsRequest,
  type PrimaryToWorker,
  type ReadyMessage,
  SLOT_ENV,
} from "./messages.js";

const BACKOFF_BASE_MS = 250;
const BACKOFF_MAX_MS = 10_000;
/** A worker that has listened this long resets its slot's backoff. */
const STABLE_MS = 10_000;
/** Consecutive workers that die before listening (after the first boot) before the primary gives up. */
const MAX_BOOT_FAILURES = 5;
/** Grace beyond `--drain-timeout` before workers that have not exited are killed. */
const KILL_GRACE_MS = 5_000;

interface Slot {
  readonly index: number;
  worker: Worker | undefined;
  ready: boolean;
  failures: number;
  restartTimer: NodeJS.Timeout | undefined;
  stableTimer: NodeJS.Timeout | undefined;
}

/** Fork `count` workers and supervise them; returns 0 at once (the process lives on its workers). */
export async function runPrimary(settings: Settings, base: Logger, count: number): Promise<number> {
  const logger = base.child({ role: "primary", pid: process.pid });
  const metrics = groupMetrics();
  const slots: Slot[] = Array.from({ length: count }, (_, index) => ({
    index,
    worker: undefined,
    ready: false,
    failures: 0,
    restartTimer: undefined,
    stableTimer: undefined,
  }));
  let announced = false;
  let bootFailures = 0;
  let stopping: { code: number } | undefined;
  let addresses: ReadyMessage | undefined;

  const control = (w: Worker, m: PrimaryToWorker) => {
    if (w.isConnected()) w.send(m, undefined, () => {});
  };
  const live = () => slots.filter((s) => s.worker !== undefined);
  const countReady = () => metrics.workers.set(slots.filter((s) => s.ready).length);

  const onReady = (slot: Slot, m: ReadyMessage) => {
    slot.ready = true;
    bootFailures = 0;
    countReady();
    slot.stableTimer = setTimeout(() => {
      slot.failures = 0;
    }, STABLE_MS);
    if (addresses && (addresses.grpc.port !== m.grpc.port || addresses.http.port !== m.http.port)) {
      logger.error(
        { worker: slot.index, grpc: m.grpc, http: m.http },
        "worker listens on other ports than the group",
      );
    }
    addresses ??= m;
    if (announced) {
      logger.info({ worker: slot.index, workerPid: slot.worker?.process.pid }, "worker replaced");
      return;
    }
    if (!slots.every((s) => s.ready)) return;
    announced = true;
    logger.info(
      {
        grpc: `${m.grpc.address}:${m.grpc.port}`,
        http: `${m.http.address}:${m.http.port}`,
        store: redactedStore(settings),
        workers: count,
        pids: slots.map((s) => s.worker?.process.pid),
        scheduling: cluster.schedulingPolicy === cluster.SCHED_RR ? "round-robin" : "os",
      },
      "tollgate ready",
    );
  };

  const onMetricsRequest = (w: Worker, m: MetricsRequest) => {
    const listening = slots.flatMap((s) => (s.ready && s.worker ? [s.worker] : []));
    metrics.text(listening).then(
      (text) => control(w, { type: "tollgate:metrics-reply", id: m.id, text }),
      (err: unknown) => control(w, { type: "tollgate:metrics-reply", id: m.id, error: String(err) }),
    );
  };

  const finishIfDone = () => {
    if (stopping === undefined || live().length > 0) return;
    logger.info({ code: stopping.code }, "stopped");
    process.exit(stopping.code);
  };

  const shutdown = (reason: string, code: number) => {
    stopping = { code };
    for (const slot of slots) {
      clearTimeout(slot.restartTimer);
      clearTimeout(slot.stableTimer);
    }
    logger.info({ reason, workers: live().length }, "draining");
    for (const slot of live())
      if (slot.worker) control(slot.worker, { type: "tollgate:drain", signal: reason });
    setTimeout(() => {
      logger.error({ workers: live().length }, "workers did not drain in time; killing them");
      for (const slot of live()) slot.worker?.process.kill("SIGKILL");
      process.exit(1);
    }, settings.drainTimeout + KILL_GRACE_MS).unref();
    finishIfDone();
  };

  const onExit = (slot: Slot, w: Worker, code: number | null, signal: string | null) => {
    if (slot.worker !== w) return;
    const wasReady = slot.ready;
    slot.worker = undefined;
    slot.ready = false;
    clearTimeout(slot.stableTimer);
    countReady();
    if (stopping) {
      if (code !== 0) stopping.code = 1;
      finishIfDone();
      return;
    }
    const workerPid = w.process.pid;
    if (!wasReady && !announced) {
      logger.error(
        { worker: slot.index, workerPid, code, signal },
        "worker exited before it listened; stopping",
      );
      shutdown("boot failure", 1);
      return;
    }
    if (!wasReady && ++bootFailures >= MAX_BOOT_FAILURES) {
      logger.error({ worker: slot.index, bootFailures }, "workers keep dying before they listen; giving up");
      shutdown("boot failures", 1);
      return;
    }
    const delayMs = Math.min(BACKOFF_MAX_MS, BACKOFF_BASE_MS * 2 ** slot.failures);
    slot.failures += 1;
    metrics.restarts.inc();
    logger.error(
      { worker: slot.index, workerPid, code, signal, restartInMs: delayMs },
      "worker died; restarting",
    );
    slot.restartTimer = setTimeout(() => {
      slot.restartTimer = undefined;
      if (!stopping) fork(slot);
    }, delayMs);
  };

  const fork = (slot: Slot) => {
    const w = cluster.fork({ [SLOT_ENV]: String(slot.index) });
    slot.worker = w;
    slot.ready = false;
    w.on("message", (m: unknown) => {
      if (isMessage<ReadyMessage>(m, "tollgate:ready")) onReady(slot, m);
      else if (isMessage<MetricsRequest>(m, "tollgate:metrics-request")) onMetricsRequest(w, m);
    });
    w.on("exit", (code, signal) => onExit(slot, w, code, signal));
  };

  const onSignal = (signal: string) => {
    if (stopping) {
      logger.warn({ signal }, "second signal: killing the workers and exiting now");
      for (const slot of live()) slot.worker?.process.kill("SIGKILL");
      process.exit(1);
    }
    shutdown(signal, 0);
  };
  process.on("SIGTERM", () => onSignal("SIGTERM"));
  process.on("SIGINT", () => onSignal("SIGINT"));
  process.on("SIGHUP", () => {
    logger.info({ workers: live().length }, "SIGHUP: every worker reloads");
    for (const slot of live())
      if (slot.worker) control(slot.worker, { type: "tollgate:reload", signal: "SIGHUP" });
  });
  for (const slot of slots) fork(slot);
  return 0;
}
