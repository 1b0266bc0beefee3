/**
 * Redis CPU per take call of a merged GCRA call, with and without batch.lua's write-back, on a private
 * redis-server (never 6379): the bench scenarios' key patterns (3 keys per call: per-IP, per-tenant,
 * per-tenant-route) in merged calls of `--calls` calls, `--inflight` merged calls outstanding,
 * the two scripts alternated over `--rounds` rounds. CPU is redis-server's utime+stime from /proc.
 *   npm run build && node bench/redis-cpu.mjs [--calls 55] [--batches 1500] [--rounds 3]
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { Redis } from "ioredis";
import { batchLua, DEFAULT_SCRIPTS_DIR } from "../dist/store/redis/scripts.js";
import { cpuMicros } from "./measure.mjs";
import { startRedis } from "./redis.mjs";

const { values } = parseArgs({
  options: {
    calls: { type: "string", default: "55" },
    batches: { type: "string", default: "1500" },
    inflight: { type: "string", default: "8" },
    rounds: { type: "string", default: "3" },
  },
});
const CALLS = Number(values.calls);
const BATCHES = Number(values.batches);
const INFLIGHT = Number(values.inflight);
const ROUNDS = Number(values.rounds);

const lua = (name) => readFileSync(join(DEFAULT_SCRIPTS_DIR, name), "utf8");
const SCRIPTS = {
  plain: batchLua(lua("batch.lua"), lua("gcra.lua"), false),
  "write-back": batchLua(lua("batch.lua"), lua("gcra.lua"), true),
};
const POLICY = [1, 1_000_000, 1000, 2_000_000]; // cost, limit, periodMs, burst: always admitted

/** Keys of call `i` of merged call `b`: 16 connections, as in the harness (bench/run.mjs). */
const SCENARIOS = {
  hot: (_b, i) => [`{bench|ip=10.0.0.${i % 16}}`, "{bench|tenant=hot}", "{bench|tenant=hot|route=read}"],
  tenants: (b, i) => {
    const t = (b * 16 + (i % 16)) % 10_000;
    return [
      `{bench|ip=10.1.${t >> 8}.${t & 255}}`,
      `{bench|tenant=t${t}}`,
      `{bench|tenant=t${t}|route=read}`,
    ];
  },
};

function args(scenario, b) {
  const keys = [];
  for (let i = 0; i < CALLS; i++) keys.push(...SCENARIOS[scenario](b, i));
  return [keys.length, ...keys, CALLS, ...Array(CALLS).fill(3), ...keys.flatMap(() => POLICY)];
}

const server = await startRedis();
const redis = new Redis(server.url);
try {
  const sha = {};
  for (const [name, text] of Object.entries(SCRIPTS)) sha[name] = await redis.script("LOAD", text);
  const results = [];
  for (const scenario of Object.keys(SCENARIOS)) {
    const perCall = { plain: [], "write-back": [] };
    for (let round = 0; round < ROUNDS; round++) {
      for (const name of Object.keys(SCRIPTS)) {
        await redis.flushall();
        const cpu0 = cpuMicros(server.pids[0]);
        let next = 0;
        const worker = async () => {
          while (next < BATCHES) {
            const b = next++;
            const reply = await redis.evalsha(sha[name], ...args(scenario, b));
            if (reply.length !== CALLS * 12 || reply.some((v, i) => i % 4 === 0 && v !== 1))
              throw new Error(`${name}: unexpected reply`);
          }
        };
        await Promise.all(Array.from({ length: INFLIGHT }, worker));
        perCall[name].push((cpuMicros(server.pids[0]) - cpu0) / (BATCHES * CALLS));
      }
    }
    const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
    results.push({
      scenario,
      plain: median(perCall.plain),
      writeBack: median(perCall["write-back"]),
      rounds: perCall,
    });
  }
  console.log(
    `Redis CPU µs per call (3 GCRA keys), ${CALLS} calls per merged call, median of ${ROUNDS} rounds`,
  );
  console.log("| scenario | plain | write-back | ratio |");
  console.log("| --- | --- | --- | --- |");
  for (const r of results)
    console.log(
      `| ${r.scenario} | ${r.plain.toFixed(2)} | ${r.writeBack.toFixed(2)} | ${(r.writeBack / r.plain).toFixed(2)} |`,
    );
  console.error(JSON.stringify(results));
} finally {
  redis.disconnect();
  await server.stop();
}
