#!/usr/bin/env node
/**
 * RLQS cost: usage reports per second per tollgate core, and Redis cost per report.
 *
 * Starts a private redis-server (never 6379) and one tollgate (`--transport`: `tollgate`, the own
 * HTTP/2, by default, or `node`; the Redis store, an `rlqs` section), then opens `--streams` RLQS streams (official protos, @grpc/grpc-js),
 * each reporting `--buckets` buckets every `--interval` ms for `--duration` s. Reports are what an
 * Envoy sends (one BucketQuotaUsage per bucket per interval); "report" below means one bucket usage.
 *
 * Measured over the run: tollgate's CPU (utime+stime of its process tree, /proc), redis-server's
 * CPU, and Redis commands (INFO commandstats: script calls and the commands they run).
 *
 *   npm run build && node bench/rlqs.mjs [--streams 50] [--buckets 20] [--interval 100] [--duration 10]
 *     [--transport tollgate|node]
 *
 * `--fairness` (issue 26 item 4): 3 simulated Envoys at 70/20/10 % of twice a `--limit` req/s limit
 * (one bucket) on 2 tollgate instances sharing the private Redis, `--duration` s (60 by default),
 * the demand flipped to 10/20/70 % half way; reports admitted ÷ limit (after a 1 s warm-up),
 * per-Envoy shares before and after the flip against their targets, how many reporting intervals
 * the assigned rates took to settle within 15 % of the new targets, reports per second per core
 * (both instances' CPU), and Redis commands and script calls per report (bench/rlqs-fairness.mjs).
 *
 *   npm run build && node bench/rlqs.mjs --fairness [--limit 200] [--interval 200] [--duration 60]
 *     [--phase 0.5]   (where in a reporting interval the flip lands: 0.5 half way, 0.1 just after a report)
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { Redis } from "ioredis";
import { cpuMicros, cpuMicrosTree } from "./measure.mjs";
import { startRedis } from "./redis.mjs";
import { SimEnvoy } from "./rlqs-envoy.mjs";
import { commandStats as readCommandStats, startTollgate } from "./rlqs-tollgate.mjs";

const { values } = parseArgs({
  options: {
    streams: { type: "string", default: "50" },
    buckets: { type: "string", default: "20" },
    interval: { type: "string", default: "100" },
    duration: { type: "string", default: "10" },
    transport: { type: "string", default: "tollgate" },
    fairness: { type: "boolean", default: false },
    limit: { type: "string", default: "200" },
    phase: { type: "string", default: "0.5" },
  },
});
if (values.fairness) {
  // Its own defaults: one bucket per Envoy, Envoy-like 200 ms reports, a minute.
  const argv = process.argv.slice(2);
  const given = (name) => argv.some((a) => a === `--${name}` || a.startsWith(`--${name}=`));
  const { benchFairness } = await import("./rlqs-fairness-bench.mjs");
  await benchFairness({
    limit: Number(values.limit),
    intervalMs: given("interval") ? Number(values.interval) : 200,
    durationSec: given("duration") ? Number(values.duration) : 60,
    transport: values.transport,
    flipPhase: Number(values.phase),
  });
  process.exit(0);
}
const streams = Number(values.streams);
const buckets = Number(values.buckets);
const intervalMs = Number(values.interval);
const durationSec = Number(values.duration);

const dir = mkdtempSync(join(tmpdir(), "tollgate-bench-rlqs-"));
const config = join(dir, "edge.yaml");
writeFileSync(
  config,
  `domain: edge
rlqs:
  keys: [{ key: tenant }]
  reporting_interval: ${intervalMs <= 100 ? 101 : intervalMs}ms
  assignment_ttl: 10s
  idle_intervals: 1000
descriptors:
  - key: tenant
    rate_limit: { unit: second, requests_per_unit: 1000 }
`,
);

const redis = await startRedis();
process.once("exit", () => {
  // A failed start must not leave the private redis-server behind.
  for (const pid of redis.pids) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {}
  }
});
const { proc, address, httpPort } = await startTollgate(config, redis.url, values.transport);
const client = new Redis(redis.url);
const commandStats = () => readCommandStats(client);
const total = (o) => Object.values(o).reduce((a, b) => a + b, 0);

// Every stream announces its buckets with one request each (first report at once), then reports
// all of them every interval, like Envoy.
const envoys = [];
for (let s = 0; s < streams; s++) {
  const e = new SimEnvoy({ address, domain: "edge", reportingIntervalMs: intervalMs });
  for (let b = 0; b < buckets; b++) e.request({ tenant: `t${(s * buckets + b) % 1000}` });
  envoys.push(e);
}
await new Promise((r) => setTimeout(r, 2 * intervalMs + 500));

async function serverReports() {
  const text = await (await fetch(`http://127.0.0.1:${httpPort}/metrics`)).text();
  let n = 0;
  for (const m of text.matchAll(/^tollgate_rlqs_bucket_reports_total\{[^}]*\} (\S+)$/gm)) n += Number(m[1]);
  return n;
}
const serverBefore = await serverReports();
const statsBefore = await commandStats();
const cpuBefore = cpuMicrosTree(proc.pid);
const redisCpuBefore = redis.pids.reduce((a, p) => a + cpuMicros(p), 0);
const reportsBefore = envoys.reduce((a, e) => a + e.reportsSent, 0);
const started = performance.now();
await new Promise((r) => setTimeout(r, durationSec * 1000));
const elapsed = (performance.now() - started) / 1000;
const messages = envoys.reduce((a, e) => a + e.reportsSent, 0) - reportsBefore;
const cpu = (cpuMicrosTree(proc.pid) - cpuBefore) / 1e6;
const redisCpu = (redis.pids.reduce((a, p) => a + cpuMicros(p), 0) - redisCpuBefore) / 1e6;
const statsAfter = await commandStats();
const delta = Object.fromEntries(
  Object.keys(statsAfter).map((k) => [k, statsAfter[k] - (statsBefore[k] ?? 0)]),
);
const scripts = (delta.evalsha ?? 0) + (delta.eval ?? 0);
// Bucket usages tollgate received (its own counter): what the Redis and CPU costs are divided by.
const reports = (await serverReports()) - serverBefore;

for (const e of envoys) e.close();
client.disconnect();
proc.kill("SIGTERM");
await new Promise((r) => proc.once("exit", r));
await redis.stop();
rmSync(dir, { recursive: true, force: true });

const round = (x, d = 1) => Math.round(x * 10 ** d) / 10 ** d;
console.log(
  JSON.stringify(
    {
      streams,
      bucketsPerStream: buckets,
      intervalMs,
      seconds: round(elapsed, 2),
      reportMessagesPerSec: round(messages / elapsed),
      bucketReportsPerSec: round(reports / elapsed),
      tollgateCpuSec: round(cpu, 2),
      bucketReportsPerCoreSec: round(reports / Math.max(cpu, 1e-9)),
      redisScriptCallsPerReport: round(scripts / Math.max(reports, 1), 3),
      redisCommandsPerReport: round(total(delta) / Math.max(reports, 1), 2),
      redisCpuMicrosPerReport: round((redisCpu * 1e6) / Math.max(reports, 1)),
    },
    null,
    2,
  ),
);
process.exit(0); // grpc-js channels may hold the loop a while after close()
