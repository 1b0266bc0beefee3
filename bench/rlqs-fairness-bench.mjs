// `node bench/rlqs.mjs --fairness`: the fairness run of bench/rlqs-fairness.mjs on 2 tollgate
// instances (dist/cli.js, Redis store) sharing a private redis-server (never 6379), for a minute.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Redis } from "ioredis";
import { targetShares } from "../dist/engine/rlqs/allocator.js";
import { cpuMicros, cpuMicrosTree } from "./measure.mjs";
import { startRedis } from "./redis.mjs";
import { fairnessConfig, runFairness } from "./rlqs-fairness.mjs";
import { commandStats, startTollgate } from "./rlqs-tollgate.mjs";

/** See bench/rlqs.mjs (`--fairness`). Prints one JSON object. */
export async function benchFairness({ limit, intervalMs, durationSec, transport, flipPhase }) {
  const dir = mkdtempSync(join(tmpdir(), "tollgate-bench-rlqs-fair-"));
  const config = join(dir, "edge.yaml");
  writeFileSync(config, fairnessConfig({ limit, intervalMs }));
  const redis = await startRedis();
  process.once("exit", () => {
    for (const pid of redis.pids) {
      try {
        process.kill(pid, "SIGKILL");
      } catch {}
    }
  });
  const instances = await Promise.all([0, 1].map(() => startTollgate(config, redis.url, transport)));
  const client = new Redis(redis.url);
  const stats = () => commandStats(client);
  const demand = [0.7, 0.2, 0.1].map((x) => x * 2 * limit);
  const flipped = [0.1, 0.2, 0.7].map((x) => x * 2 * limit);
  const before = await stats();
  const cpuBefore = instances.map((t) => cpuMicrosTree(t.proc.pid));
  const redisCpuBefore = redis.pids.reduce((a, p) => a + cpuMicros(p), 0);
  const [a, b] = instances.map((t) => t.address);
  const m = await runFairness({
    // The shrinking and the growing Envoy on different instances.
    addresses: [a, a, b],
    limit,
    intervalMs,
    demand,
    flipped,
    targetsBefore: targetShares(limit, 0.1, demand),
    targetsAfter: targetShares(limit, 0.1, flipped),
    flipPhase,
    beforeMs: (durationSec * 1000) / 2,
    afterMs: (durationSec * 1000) / 2,
  });
  const cpu = instances.reduce((s, t, i) => s + cpuMicrosTree(t.proc.pid) - (cpuBefore[i] ?? 0), 0) / 1e6;
  const redisCpu = (redis.pids.reduce((s, p) => s + cpuMicros(p), 0) - redisCpuBefore) / 1e6;
  const after = await stats();
  const delta = Object.fromEntries(Object.keys(after).map((k) => [k, after[k] - (before[k] ?? 0)]));
  const commands = Object.values(delta).reduce((s, x) => s + x, 0);
  const scripts = (delta.evalsha ?? 0) + (delta.eval ?? 0);
  client.disconnect();
  for (const t of instances) t.proc.kill("SIGTERM");
  await Promise.all(instances.map((t) => new Promise((r) => t.proc.once("exit", r))));
  await redis.stop();
  rmSync(dir, { recursive: true, force: true });
  const round = (x, d = 2) => Math.round(x * 10 ** d) / 10 ** d;
  console.log(
    JSON.stringify(
      {
        mode: "fairness",
        transport,
        intervalMs,
        ...m,
        tollgateCpuSec: round(cpu),
        reportsPerCoreSec: round(m.reports / Math.max(cpu, 1e-9), 0),
        redisCommandsPerReport: round(commands / m.reports),
        redisScriptCallsPerReport: round(scripts / m.reports),
        redisCommandsPerSec: round(commands / m.seconds, 1),
        redisCpuMicrosPerReport: round((redisCpu * 1e6) / m.reports, 1),
        byCommand: delta,
      },
      null,
      2,
    ),
  );
}
