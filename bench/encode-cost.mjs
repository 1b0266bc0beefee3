/**
 * Client CPU of the merged take call's EVALSHA encoder (src/store/redis/resp.ts) per request of the
 * bench's traffic (3 takes: per-IP, per-tenant, per-tenant-route), over batches of 128 requests as a
 * busy event-loop turn merges them. Prints one line per round and the minimum.
 *   npm run build && node bench/encode-cost.mjs [--rounds N] [--batches N] [--dist DIR]
 * `--dist` reads another build (e.g. a worktree of an older commit) for a same-machine A/B.
 */
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { parseArgs } from "node:util";

const { values } = parseArgs({
  options: {
    rounds: { type: "string", default: "4" },
    batches: { type: "string", default: "20000" },
    dist: { type: "string", default: new URL("../dist", import.meta.url).pathname },
  },
});
const rounds = Number(values.rounds);
const batches = Number(values.batches);
if (!(rounds >= 1 && batches >= 1)) throw new Error("--rounds and --batches must be at least 1");
const { encodeBatchEvalsha } = await import(pathToFileURL(resolve(values.dist, "store/redis/resp.js")).href);

// Policies as the compiled config holds them: one frozen object per rule, shared by its requests;
// since the compiled config carries each policy's argument bytes (config/hot-path.ts), built by it
// when the build has it.
const hotPath = await import(pathToFileURL(resolve(values.dist, "config/hot-path.js")).href).catch(
  () => undefined,
);
const policy = (burst) => {
  const plain = Object.freeze({ algorithm: "gcra", limit: 1_000_000, periodMs: 1000, burst });
  return hotPath === undefined ? plain : hotPath.compiledPolicy(plain);
};
const perIp = policy(1_000_000);
const perTenant = policy(1_000_000);
const perRoute = policy(2_000_000);
const PER_BATCH = 128;
const calls = Array.from({ length: PER_BATCH }, (_, i) => [
  { key: `tl:v1:{bench|remote_address=10.0.${i % 16}.1}:g0`, cost: 1, policy: perIp },
  { key: `tl:v1:{bench|tenant=t${i}}:g0`, cost: 1, policy: perTenant },
  { key: `tl:v1:{bench|tenant=t${i}|route_class=read}:g0`, cost: 1, policy: perRoute },
]);
const sha = "0".repeat(40);

encodeBatchEvalsha(sha, calls); // warm up
const perRequest = [];
for (let r = 0; r < rounds; r++) {
  const cpu = process.cpuUsage();
  for (let i = 0; i < batches; i++) encodeBatchEvalsha(sha, calls);
  const used = process.cpuUsage(cpu);
  perRequest.push((used.user + used.system) / (batches * PER_BATCH));
}
const fmt = (n) => n.toFixed(3);
console.log(
  `EVALSHA encoding, ${PER_BATCH} requests of 3 takes per call: ${perRequest.map(fmt).join(" ")} µs CPU per request; min ${fmt(Math.min(...perRequest))}`,
);
