/**
 * The IPC messages between the cluster primary and its workers (node:cluster's `process.send`
 * channel). prom-client's AggregatorRegistry uses the same channel with its own `prom-client:*` types.
 */
import type { AddressInfo } from "node:net";

/** Worker → primary: the app is listening on these (shared) addresses. */
export interface ReadyMessage {
  readonly type: "tollgate:ready";
  readonly grpc: AddressInfo;
  readonly http: AddressInfo;
}

/** Worker → primary: a scrape of `/metrics` wants the whole group's metrics. */
export interface MetricsRequest {
  readonly type: "tollgate:metrics-request";
  readonly id: number;
}

/** Primary → worker: the aggregated metrics text (or why there is none). */
export interface MetricsReply {
  readonly type: "tollgate:metrics-reply";
  readonly id: number;
  readonly text?: string;
  readonly error?: string;
}

/** Primary → worker: send your registry as JSON (`Registry.getMetricsAsJSON()`) for the aggregate. */
export interface CollectRequest {
  readonly type: "tollgate:metrics-collect";
  readonly id: number;
}

/** Worker → primary: its metrics, or why it has none. */
export interface CollectReply {
  readonly type: "tollgate:metrics-json";
  readonly id: number;
  readonly metrics?: unknown[];
  readonly error?: string;
}

/** Primary → worker: drain and exit 0 (the primary got SIGTERM/SIGINT), or reload the config (SIGHUP). */
export interface ControlMessage {
  readonly type: "tollgate:drain" | "tollgate:reload";
  readonly signal: string;
}

export type WorkerToPrimary = ReadyMessage | MetricsRequest | CollectReply;
export type PrimaryToWorker = MetricsReply | CollectRequest | ControlMessage;

/** Environment variable carrying a worker's slot (0..N-1, kept by its replacements). */
export const SLOT_ENV = "TOLLGATE_WORKER_SLOT";

/** Whether `m` is one of tollgate's IPC messages of type `type`. */
export function isMessage<T extends { type: string }>(m: unknown, type: T["type"]): m is T {
  return typeof m === "object" && m !== null && (m as { type?: unknown }).type === type;
}
