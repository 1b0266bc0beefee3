/**
 * `npm run bench`: start Redis (single and a 3-master cluster, private ports), the two baselines and
 * tollgate in each mode, drive each with h2load, print one table. Flags: bench/options.mjs.
 * Assumes `npm run build` has produced dist/ (the npm script does it).
 */
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { availableParallelism } from "node:os";
import { fileURLToPath } from "node:url";
import { encodeFrames, scenarioPoints } from "./frames.mjs";
import { haveH2load, load } from "./h2load.mjs";
import {
  cpuMicrosAll,
  cpuMicrosTree,
  machineBusyMicros,
  mainThreadMicrosTree,
  tollgateCounters,
} from "./measure.mjs";
import { parseOptions } from "./options.mjs";
import { probe } from "./probe.mjs";
import { startCluster, startRedis } from "./redis.mjs";
import { renderNotes, renderTable } from "./table.mjs";
import { startBaseline, startTollgate } from "./targets.mjs";

const outDir = fileURLToPath(new URL("out/", import.meta.url));
const configDir = (lease) => fileURLToPath(new URL(lease ? "config-lease/" : "config/", import.meta.url));
const log = (msg) => process.stderr.write(`bench: ${msg}\n`);

/** Frames per round for a scenario. */
function roundsOf(opts, scenario) {
  const n = scenario === "hot" ? 1 : opts.rounds;
  return Array.from({ length: n }, (_, round) =>
    encodeFrames(scenarioPoints({ scenario, connections: opts.connections, round })),
  );
}

/**
 * Warm up, measure at peak, then at 50% of peak; one table row. With `raw` (the raw baseline, up and
 * idle), the peak run is cut into `opts.slices` slices and a raw slice of the same length runs before
 * each and after the last: the row's ceiling is the raw rate over those slices, measured in the same
 * seconds as the row (this shared machine's speed drifted by 2-3x within one table; raw runs minutes
 * away from a row said little about it).
 */
async function measure(opts, target, scenario, redisPids, raw) {
  const rounds = roundsOf(opts, scenario === "fixed" ? "hot" : scenario);
  for (const frames of rounds) await probe(target.grpcPort, frames);
  const base = { port: target.grpcPort, streams: opts.streams, outDir };
  if (opts.warmup > 0) {
    await load({ ...base, rounds: [rounds[0]], seconds: opts.warmup, label: `${target.name}-warm` });
  }
  const sliceCount = raw ? Math.max(opts.slices, rounds.length) : rounds.length;
  const slices = Array.from({ length: sliceCount }, (_, i) => rounds[i % rounds.length]);
  const perRound = opts.duration / slices.length;
  const rawSlices = [];
  const [rawFrames] = roundsOf(opts, "hot");
  const rawSlice = async () => {
    const run = { port: raw.grpcPort, streams: opts.streams, outDir, rounds: [rawFrames] };
    rawSlices.push(await load({ ...run, seconds: perRound, label: "raw-beside" }));
  };
  // The whole machine's busy time, counted only while this row's own slices run (not the raw ones).
  const machine = { busy: 0, wallMs: 0, open: undefined };
  const openWindow = () => {
    machine.open = { busy: machineBusyMicros(), at: performance.now() };
  };
  const closeWindow = () => {
    if (!machine.open) return;
    machine.busy += machineBusyMicros() - machine.open.busy;
    machine.wallMs += performance.now() - machine.open.at;
    machine.open = undefined;
  };
  const before = await tollgateCounters(target.httpPort);
  // The whole process tree: with --workers the primary's pid is not where the requests are decided.
  // (The raw slices leave tollgate and Redis idle.)
  const cpu0 = cpuMicrosTree(target.pid);
  const main0 = mainThreadMicrosTree(target.pid);
  const redis0 = cpuMicrosAll(redisPids);
  if (!raw) openWindow();
  const peak = await load({
    ...base,
    rounds: slices,
    seconds: perRound,
    label: `${target.name}-${scenario}`,
    beforeRound: raw
      ? async () => {
          closeWindow();
          await rawSlice();
          openWindow();
        }
      : undefined,
  });
  closeWindow();
  if (raw) await rawSlice();
  const cpu = cpuMicrosTree(target.pid) - cpu0;
  const mainCpu = mainThreadMicrosTree(target.pid) - main0;
  const redisCpu = cpuMicrosAll(redisPids) - redis0;
  const after = await tollgateCounters(target.httpPort);
  const rawRequests = rawSlices.reduce((n, r) => n + r.requests, 0);
  const rawSeconds = rawSlices.reduce((n, r) => n + r.seconds, 0);
  // The latency run drives the same rate from few h2load processes with few streams: 16 processes
  // time-sliced on one pinned core, each bursting up to 32 streams per --rps tick, measured their
  // own scheduling (raw node:http2 p99 28.5 ms at 24k req/s with 16 × 32, 0.55 ms with 1 × 8;
  // bench/history/2026-12.md, "Latency run"). Each round keeps its first `halfConnections` request bodies.
  const half = await load({
    ...base,
    streams: opts.halfStreams,
    rounds: rounds.map((frames) => frames.slice(0, opts.halfConnections)),
    seconds: opts.duration / rounds.length,
    rps: peak.throughput / 2,
    label: `${target.name}-${scenario}-half`,
  });
  const end = await tollgateCounters(target.httpPort);
  const n = Math.max(1, peak.requests);
  return {
    mode: target.name,
    scenario,
    throughput: peak.throughput,
    requests: peak.requests,
    failed: peak.failed + half.failed,
    storeErrors: end.storeErrors - before.storeErrors,
    degraded: after.degraded > 0 || end.degraded > 0,
    p50Ms: peak.p50Ms,
    p99Ms: peak.p99Ms,
    halfRate: half.throughput,
    p99HalfMs: half.p99Ms,
    cpuMicrosPerRequest: cpu / n,
    // Cores busy running JavaScript (main threads; 1.0 = one process's JS thread saturated), cores
    // of the machine left idle, and the machine's CPU per request beyond the target and Redis (the
    // h2load processes, and anything else running), all over this row's own slices.
    jsCores: peak.seconds > 0 ? mainCpu / (peak.seconds * 1e6) : Number.NaN,
    idleCores:
      machine.wallMs > 0 ? availableParallelism() - machine.busy / (machine.wallMs * 1000) : Number.NaN,
    otherCpuMicrosPerRequest: (machine.busy - cpu - redisCpu) / n,
    ...(raw
      ? {
          ceiling: rawSeconds > 0 ? rawRequests / rawSeconds : Number.NaN,
          rawSlices: rawSlices.map((r) => r.throughput),
        }
      : {}),
    ...(redisPids.length > 0
      ? {
          roundTripsPerRequest: (after.roundTrips - before.roundTrips) / n,
          redisCpuMicrosPerRequest: redisCpu / n,
        }
      : {}),
  };
}

/**
 * At 16 × 32 streams in flight a saturated server queues each request for tens of ms (Little's law:
 * 512 ÷ req/s), so the production store deadline (10 ms) would fire, open the breaker and measure the
 * local fallback instead of Redis. The peak runs therefore use a 1 s deadline; store errors and
 * degraded mode are still counted per row, so a row that did not measure Redis shows it.
 */
const REDIS_ARGS = ["--store-deadline", "1s", "--redis-command-timeout", "2s"];

const BASELINES = {
  raw: "./baselines/raw-http2.mjs",
  grpcjs: "./baselines/grpc-js-noop.mjs",
  transport: "./baselines/transport-noop.mjs",
};

/** Start one mode's target (and its Redis, kept in `redis` for reuse). */
async function startMode(opts, mode, redis) {
  const nodeArgs = opts.cpuProf
    ? ["--cpu-prof", "--cpu-prof-dir", opts.cpuProf, "--cpu-prof-name", `${mode}.cpuprofile`]
    : [];
  if (BASELINES[mode]) {
    const scriptArgs = mode === "raw" ? ["--workers", String(opts.rawWorkers)] : [];
    return { target: await startBaseline(mode, BASELINES[mode], nodeArgs, scriptArgs), redisPids: [] };
  }
  if (mode === "memory") {
    return {
      target: await startTollgate({
        name: mode,
        store: "memory",
        config: configDir(false),
        nodeArgs,
        extraArgs: ["--grpc-transport", opts.grpcTransport],
      }),
      redisPids: [],
    };
  }
  const kind = mode === "cluster" ? "cluster" : "single";
  redis[kind] ??= await (kind === "cluster" ? startCluster(3) : startRedis());
  const server = redis[kind];
  const target = await startTollgate({
    name: mode,
    store: server.url,
    config: configDir(mode === "lease"),
    nodeArgs,
    extraArgs: [...REDIS_ARGS, "--workers", String(opts.workers), "--grpc-transport", opts.grpcTransport],
  });
  return { target, redisPids: server.pids };
}

async function main() {
  const opts = parseOptions(process.argv.slice(2));
  if (!(await haveH2load())) throw new Error("h2load not found: apt-get install -y nghttp2-client");
  rmSync(outDir, { recursive: true, force: true });
  mkdirSync(outDir, { recursive: true });
  // The raw baseline stays up the whole run: a full row first and last, and slices of its peak
  // interleaved with every other row's (see `measure`), each row read against its own slices.
  const others = opts.modes.filter((m) => m !== "raw");
  const redis = {};
  const rows = [];
  let raw;
  try {
    raw = (await startMode(opts, "raw", redis)).target;
    log("raw / hot");
    rows.push(await measure(opts, raw, "fixed", []));
    for (const mode of others) {
      const { target, redisPids } = await startMode(opts, mode, redis);
      try {
        const scenarios = BASELINES[mode] ? ["hot"] : mode === "lease" ? ["hot"] : opts.scenarios;
        for (const scenario of scenarios) {
          log(`${mode} / ${scenario}`);
          rows.push(await measure(opts, target, BASELINES[mode] ? "fixed" : scenario, redisPids, raw));
        }
      } finally {
        await target.stop();
      }
    }
    if (others.length > 0) {
      log("raw / hot");
      rows.push(await measure(opts, raw, "fixed", []));
    }
  } finally {
    await raw?.stop();
    await Promise.all(Object.values(redis).map((r) => r.stop()));
  }
  const best = Math.max(...rows.map((r) => r.ceiling ?? r.throughput));
  for (const row of rows) {
    row.ceiling ??= best;
    row.ratio = row.throughput / row.ceiling;
  }
  const shown = opts.modes.includes("raw") ? rows : rows.filter((r) => r.mode !== "raw");
  process.stdout.write(`${renderTable(shown)}\n\n${renderNotes(opts)}\n`);
  if (opts.json) writeFileSync(opts.json, `${JSON.stringify({ options: opts, rows }, null, 2)}\n`);
}

main().catch((err) => {
  process.stderr.write(`bench failed: ${err instanceof Error ? err.stack : err}\n`);
  process.exitCode = 1;
});
