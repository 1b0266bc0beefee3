/**
 * The primary's view of `/metrics` under `--workers`: every listening worker's registry, merged by
 * prom-client's `AggregatorRegistry.aggregate` (each metric's `aggregator`: counters and histograms
 * sum, gauges as defined in src/metrics/definitions.ts), then the primary's own two series.
 *
 * prom-client's `clusterMetrics()` asks every connected worker, including one still loading its
 * modules, which never answers and stalls the scrape for 5 s whenever a worker restarts; here only
 * workers that have said they listen are asked, and one that exits mid-scrape is left out.
 */
import type { Worker } from "node:cluster";
import { AggregatorRegistry, Counter, Gauge, Registry } from "prom-client";
import { PREFIX } from "../metrics/definitions.js";
import { type CollectReply, isMessage } from "./messages.js";

/** A worker that has not sent its metrics by then fails the scrape (better a gap than a fake counter reset). */
const COLLECT_TIMEOUT_MS = 3_000;

export interface GroupMetrics {
  /** Listening workers right now. */
  readonly workers: Gauge;
  readonly restarts: Counter;
  /** The aggregate of `workers` plus the primary's own series. */
  text(workers: readonly Worker[]): Promise<string>;
}

function collect(w: Worker, id: number): Promise<object[] | undefined> {
  return new Promise((resolve, reject) => {
    const done = () => {
      clearTimeout(timer);
      w.off("message", onMessage);
      w.off("exit", onExit);
    };
    const onMessage = (m: unknown) => {
      if (!isMessage<CollectReply>(m, "tollgate:metrics-json") || m.id !== id) return;
      done();
      if (m.metrics) resolve(m.metrics as object[]);
      else reject(new Error(`worker ${w.id}: ${m.error ?? "no metrics"}`));
    };
    const onExit = () => {
      done();
      resolve(undefined);
    };
    const timer = setTimeout(() => {
      done();
      reject(new Error(`worker ${w.id} sent no metrics within ${COLLECT_TIMEOUT_MS} ms`));
    }, COLLECT_TIMEOUT_MS);
    w.on("message", onMessage);
    w.on("exit", onExit);
    w.send({ type: "tollgate:metrics-collect", id }, undefined, (err) => {
      if (err) onExit();
    });
  });
}

export function groupMetrics(): GroupMetrics {
  const own = new Registry();
  const workers = new Gauge({
    name: `${PREFIX}workers`,
    help: "Worker processes listening (--workers); below the setting while one restarts.",
    registers: [own],
  });
  const restarts = new Counter({
    name: `${PREFIX}worker_restarts_total`,
    help: "Workers that died unexpectedly and were started again.",
    registers: [own],
  });
  let nextId = 0;
  return {
    workers,
    restarts,
    async text(listening) {
      const id = nextId++;
      const parts = await Promise.all(listening.map((w) => collect(w, id)));
      const merged = AggregatorRegistry.aggregate(parts.filter((p) => p !== undefined));
      const [group, mine] = await Promise.all([merged.metrics(), own.metrics()]);
      return `${group.trimEnd()}\n${mine}`;
    },
  };
}
