/**
 * Every tollgate metric, defined in this one place. Names start with `tollgate_`; label names are
 * fixed here and label values are bounded (config paths, fixed enums, or capped by `SeriesCap`).
 * docs/operations.md, envoy/prometheus/alerts.yaml and envoy/grafana/tollgate.json use these names.
 */
import { Counter, Gauge, type Registry } from "prom-client";
import { FastHistogram } from "./fast-histogram.js";

/** Prefix of every metric name, Node process metrics included. */
export const PREFIX = "tollgate_";

/**
 * Decision latency buckets in seconds: 50 µs to 50 ms, dense around Envoy's default 20 ms budget.
 */
export const DECISION_BUCKETS: readonly number[] = [
  0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.015, 0.02, 0.03, 0.05,
];

/** Store latency buckets in seconds: the store deadline (10 ms by default) sits inside the range. */
export const STORE_BUCKETS: readonly number[] = [
  0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.0075, 0.01, 0.02, 0.05,
];

/** Hooks of {@link defineMetrics}. */
export interface DefineOptions {
  /** Called before the decision, hit and lease counters are read (a scrape), to flush buffered counts. */
  readonly beforeCollect?: () => void;
  /** Read at scrape time for `tollgate_in_flight_requests` (kept as a plain number on the hot path). */
  readonly inFlight?: () => number;
}

/** Builds every metric on `registry` (never the global registry). */
export function defineMetrics(registry: Registry, options: DefineOptions = {}) {
  const registers = [registry];
  const collect = options.beforeCollect;
  return {
    decisions: new Counter({
      name: `${PREFIX}decisions_total`,
      help: "Descriptors decided, by domain, rule (config path, never request values) and result.",
      labelNames: ["domain", "rule", "result"] as const,
      registers,
      collect,
    }),
    hits: new Counter({
      name: `${PREFIX}hits_total`,
      help: "Hits (hits_addend) charged or checked, by domain, rule and result.",
      labelNames: ["domain", "rule", "result"] as const,
      registers,
      collect,
    }),
    detailedDecisions: new Counter({
      name: `${PREFIX}detailed_decisions_total`,
      help: 'Descriptors of detailed_metric rules, by the descriptor\'s key_value detail (series capped, then detail="_overflow_").',
      labelNames: ["domain", "rule", "detail", "result"] as const,
      registers,
    }),
    overrideDecisions: new Counter({
      name: `${PREFIX}override_decisions_total`,
      help: 'Descriptors carrying a request-supplied limit override, by override such as "100/minute" (series capped, then override="_overflow_").',
      labelNames: ["domain", "override", "result"] as const,
      registers,
    }),
    decisionSeconds: new FastHistogram({
      name: `${PREFIX}decision_duration_seconds`,
      help: "Wall time of one whole ShouldRateLimit / Check decision.",
      buckets: [...DECISION_BUCKETS],
      registers,
    }),
    storeSeconds: new FastHistogram({
      name: `${PREFIX}store_duration_seconds`,
      help: "Wall time of one store operation (take, reset, lease, refund, ...).",
      labelNames: ["operation"] as const,
      buckets: [...STORE_BUCKETS],
      registers,
    }),
    storeErrors: new Counter({
      name: `${PREFIX}store_errors_total`,
      help: "Store errors by classified kind (timeout, connection, script, circuit_open, ...).",
      labelNames: ["kind"] as const,
      registers,
    }),
    storeRoundTrips: new Counter({
      name: `${PREFIX}store_round_trips_total`,
      help: "Redis round trips made.",
      registers,
    }),
    breakerState: new Gauge({
      name: `${PREFIX}breaker_state`,
      help: "Store circuit breaker: 0 closed, 1 half-open, 2 open.",
      registers,
      aggregator: "max",
    }),
    degraded: new Gauge({
      name: `${PREFIX}degraded`,
      help: "1 while decisions follow the store failure policy instead of the store, else 0.",
      registers,
      aggregator: "max",
    }),
    leaseGrants: new Counter({
      name: `${PREFIX}lease_grants_total`,
      help: "Leases granted from the shared store to this instance.",
      registers,
    }),
    leaseGrantedTokens: new Counter({
      name: `${PREFIX}lease_granted_tokens_total`,
      help: "Tokens received in granted leases.",
      registers,
    }),
    leaseReturns: new Counter({
      name: `${PREFIX}lease_returns_total`,
      help: "Leases returned (unused tokens given back) to the shared store.",
      registers,
    }),
    leaseReturnedTokens: new Counter({
      name: `${PREFIX}lease_returned_tokens_total`,
      help: "Unused tokens given back to the shared store.",
      registers,
    }),
    leaseLocal: new Counter({
      name: `${PREFIX}lease_local_total`,
      help: "Takes answered from a local lease (outcome=hit) or that had to go to the store (outcome=miss).",
      labelNames: ["outcome"] as const,
      registers,
      collect,
    }),
    instances: new Gauge({
      name: `${PREFIX}instances`,
      help: "Live tollgate instances seen through the Redis heartbeat (the local fallback divides limits by it).",
      registers,
      aggregator: "max",
    }),
    reloads: new Counter({
      name: `${PREFIX}config_reloads_total`,
      help: "Config loads and reloads by result (success, failure).",
      labelNames: ["result"] as const,
      registers,
    }),
    reloadOk: new Gauge({
      name: `${PREFIX}config_last_reload_successful`,
      help: "1 while the rules in force come from the last config load (it succeeded), 0 while the last reload failed and the previous rules are kept.",
      registers,
      aggregator: "min",
    }),
    lastReload: new Gauge({
      name: `${PREFIX}config_last_reload_success_timestamp_seconds`,
      help: "Unix time of the last successful config load.",
      registers,
      aggregator: "min",
    }),
    rejected: new Counter({
      name: `${PREFIX}rejected_requests_total`,
      help: "Requests refused before a decision, by reason (overload, invalid_argument, deadline).",
      labelNames: ["reason"] as const,
      registers,
    }),
    buildInfo: new Gauge({
      name: `${PREFIX}build_info`,
      help: "Always 1: the running tollgate version, Node.js version and gRPC transport (--grpc-transport) as labels.",
      labelNames: ["version", "node_version", "transport"] as const,
      registers,
      // Every worker reports the same labels: the group shows 1, not the number of workers.
      aggregator: "max",
    }),
    rlqsStreams: new Gauge({
      name: `${PREFIX}rlqs_streams`,
      help: "RLQS streams (StreamRateLimitQuotas) open now.",
      registers,
    }),
    rlqsStreamsClosed: new Counter({
      name: `${PREFIX}rlqs_streams_closed_total`,
      help: "RLQS streams ended, by reason (ok: the client half-closed; idle: no report for the idle time; invalid_argument; internal; closed: cancelled, connection gone or drained).",
      labelNames: ["reason"] as const,
      registers,
    }),
    rlqsUsages: new Counter({
      name: `${PREFIX}rlqs_bucket_reports_total`,
      help: "Bucket usages received in RLQS usage reports, by domain (configured rlqs domains only).",
      labelNames: ["domain"] as const,
      registers,
    }),
    rlqsAssignments: new Counter({
      name: `${PREFIX}rlqs_assignments_total`,
      help: "RLQS quota assignments sent, by domain and kind (token_bucket, allow_all, deny_all).",
      labelNames: ["domain", "kind"] as const,
      registers,
    }),
    rlqsAbandons: new Counter({
      name: `${PREFIX}rlqs_abandons_total`,
      help: "RLQS buckets abandoned (AbandonAction sent) after idle_intervals reports without requests, by domain.",
      labelNames: ["domain"] as const,
      registers,
    }),
    rlqsBoardErrors: new Counter({
      name: `${PREFIX}rlqs_board_errors_total`,
      help: "RLQS usage reports the shared usage board (Redis) failed, by domain and the failure policy that answered (local, allow, deny, error).",
      labelNames: ["domain", "policy"] as const,
      registers,
    }),
    inFlight: new Gauge({
      name: `${PREFIX}in_flight_requests`,
      help: "Requests being decided right now (bounded by --max-in-flight).",
      registers,
      ...(options.inFlight
        ? {
            collect(this: Gauge) {
              this.set((options.inFlight as () => number)());
            },
          }
        : {}),
    }),
  };
}

/**
 * Series of one cluster worker (`--workers`). With prom-client's AggregatorRegistry every other
 * metric is summed over the workers (counters, histograms, in-flight) or takes the max (breaker
 * state, degraded, instances) or min (last reload time); these carry the worker slot as a label so
 * each worker keeps its own series. `started()` is the worker's request count so far.
 */
export function defineWorkerMetrics(
  registry: Registry,
  worker: { readonly slot: string; readonly pid: number },
  started: () => number,
): void {
  const registers = [registry];
  new Gauge({
    name: `${PREFIX}worker_info`,
    help: "1 per live worker process (--workers), by worker slot and pid.",
    labelNames: ["worker", "pid"] as const,
    registers,
  }).set({ worker: worker.slot, pid: String(worker.pid) }, 1);
  let reported = 0;
  new Counter({
    name: `${PREFIX}worker_requests_total`,
    help: "gRPC requests taken by each worker. Connections are balanced over workers, not requests: this shows the skew.",
    labelNames: ["worker"] as const,
    registers,
    collect() {
      const n = started();
      this.inc({ worker: worker.slot }, n - reported);
      reported = n;
    },
  });
}

/** The metric objects returned by {@link defineMetrics}. */
export type MetricSet = ReturnType<typeof defineMetrics>;
