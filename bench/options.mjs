/**
 * Command-line flags of `npm run bench` (`node bench/run.mjs [flags]`):
 *   --modes raw,grpcjs,memory,redis,cluster,lease   targets to run (default: these six; `transport`,
 *                     tollgate's gRPC transport answering a fixed response, runs when named)
 *   --scenarios hot,tenants                         traffic (default: both; lease runs hot only)
 *   --duration S      seconds of each measured run (peak, then 50% of peak)   default 10
 *   --warmup S        unmeasured seconds before the peak run (JIT, connections) default 2
 *   --connections N   h2load connections (one h2load process each)           default 16
 *   --streams N       concurrent streams per connection                      default 32
 *   --half-connections N  h2load processes of the 50%-of-peak latency run       default 1
 *   --half-streams N  streams per connection of the 50%-of-peak run            default 8
 *   --rounds N        rounds of the tenants scenario (new tenants each round)  default 4
 *   --slices N        slices of each row's peak run, each after a raw slice (the row's ceiling) default 4
 *   --workers N       tollgate --workers N in the Redis modes (redis, cluster, lease) default 1
 *   --raw-workers N   the raw baseline as N node:cluster workers on one socket (its rows and every
 *                     ceiling slice; pair with --workers for a like-for-like ceiling) default 1
 *   --grpc-transport T  tollgate's gRPC transport in every tollgate row: tollgate (its own HTTP/2, the
 *                     default) or node (node:http2), to compare the two              default tollgate
 *   --cpu-prof DIR    run tollgate and the baselines under `node --cpu-prof`, profiles in DIR (<mode>.cpuprofile)
 *   --json FILE       also write the results as JSON
 *   --smoke           a few seconds in total: 0.5 s warm-up and runs, 4 connections, 1 round
 */
import { parseArgs } from "node:util";

/** What `--modes` runs when not given. */
export const DEFAULT_MODES = Object.freeze(["raw", "grpcjs", "memory", "redis", "cluster", "lease"]);
export const ALL_MODES = Object.freeze([...DEFAULT_MODES, "transport"]);
export const ALL_SCENARIOS = Object.freeze(["hot", "tenants"]);

function list(value, allowed, flag) {
  const items = value.split(",").filter(Boolean);
  for (const item of items) {
    if (!allowed.includes(item)) throw new Error(`${flag}: unknown "${item}" (one of ${allowed.join(", ")})`);
  }
  return items;
}

function positive(value, flag) {
  const n = Number(value);
  if (!Number.isFinite(n) || n < 0)
    throw new Error(`${flag}: expected a non-negative number, got "${value}"`);
  return n;
}

/** Parse argv into the harness options (throws with the flag named on a bad value). */
export function parseOptions(argv) {
  const { values } = parseArgs({
    args: argv,
    options: {
      modes: { type: "string", default: DEFAULT_MODES.join(",") },
      scenarios: { type: "string", default: ALL_SCENARIOS.join(",") },
      duration: { type: "string" },
      warmup: { type: "string" },
      connections: { type: "string" },
      streams: { type: "string", default: "32" },
      "half-connections": { type: "string", default: "1" },
      "half-streams": { type: "string", default: "8" },
      rounds: { type: "string" },
      slices: { type: "string" },
      workers: { type: "string", default: "1" },
      "raw-workers": { type: "string", default: "1" },
      "grpc-transport": { type: "string", default: "tollgate" },
      "cpu-prof": { type: "string" },
      json: { type: "string" },
      smoke: { type: "boolean", default: false },
    },
  });
  const smoke = values.smoke;
  return {
    smoke,
    modes: list(values.modes, ALL_MODES, "--modes"),
    scenarios: list(values.scenarios, ALL_SCENARIOS, "--scenarios"),
    duration: positive(values.duration ?? (smoke ? "0.5" : "10"), "--duration"),
    warmup: positive(values.warmup ?? (smoke ? "0.5" : "2"), "--warmup"),
    connections: Math.max(
      1,
      Math.round(positive(values.connections ?? (smoke ? "4" : "16"), "--connections")),
    ),
    streams: Math.max(1, Math.round(positive(values.streams, "--streams"))),
    halfConnections: Math.max(1, Math.round(positive(values["half-connections"], "--half-connections"))),
    halfStreams: Math.max(1, Math.round(positive(values["half-streams"], "--half-streams"))),
    rounds: Math.max(1, Math.round(positive(values.rounds ?? (smoke ? "1" : "4"), "--rounds"))),
    slices: Math.max(1, Math.round(positive(values.slices ?? (smoke ? "1" : "4"), "--slices"))),
    workers: Math.max(1, Math.round(positive(values.workers, "--workers"))),
    rawWorkers: Math.max(1, Math.round(positive(values["raw-workers"], "--raw-workers"))),
    grpcTransport: list(values["grpc-transport"], ["tollgate", "node"], "--grpc-transport")[0] ?? "tollgate",
    cpuProf: values["cpu-prof"],
    json: values.json,
  };
}
