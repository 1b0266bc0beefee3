/**
 * The store stack's client CPU per decision, without HTTP/2 or h2load: decode, the engine, the store
 * as `serve` builds it (lease → guard(s) → RedisStore, or the in-process store), encode, with
 * `--inflight` decisions started per event-loop turn (as a loaded server has them) and awaited
 * together. Redis is a private redis-server (or a 3-master cluster) on a free port, never 6379.
 * CPU is this process's utime+stime (all of it is the client: Redis runs in its own processes).
 *   npm run build && node --max-semi-space-size=64 bench/client-cpu.mjs --store cluster
 *   flags: --store memory|redis|cluster (default redis), --inflight 128, --turns 400, --rounds 6
 * Prints the µs per decision of each round, their min and median. Compare builds in separate runs,
 * alternated: two builds in one process slow whichever is loaded second (shared ioredis).
 */
import { parseArgs } from "node:util";
import pino from "pino";
import { FULL_SCHEMA } from "../dist/config/full-schema.js";
import { loadConfig } from "../dist/config/load.js";
import { Engine } from "../dist/engine/decide.js";
import { TollgateMetrics } from "../dist/metrics/metrics.js";
import { DEFAULT_BOUNDS, decodeQuery, encodeAnswerFramed } from "../dist/protocol/codec.js";
import { loadSettings } from "../dist/settings.js";
import { createStore } from "../dist/store/create.js";
import { encodeFrames, scenarioPoints } from "./frames.mjs";
import { startCluster, startRedis } from "./redis.mjs";

const { values } = parseArgs({
  options: {
    store: { type: "string", default: "redis" },
    inflight: { type: "string", default: "128" },
    turns: { type: "string", default: "400" },
    rounds: { type: "string", default: "6" },
  },
});
const STORES = ["memory", "redis", "cluster"];
if (!STORES.includes(values.store)) throw new Error(`--store must be one of ${STORES.join(", ")}`);
const [K, TURNS, ROUNDS] = ["inflight", "turns", "rounds"].map((name) => {
  const n = Number(values[name]);
  if (!Number.isInteger(n) || n < 1) throw new Error(`--${name} must be a whole number ≥ 1`);
  return n;
});

const server =
  values.store === "cluster"
    ? await startCluster()
    : values.store === "redis"
      ? await startRedis()
      : undefined;
try {
  const settings = loadSettings(["--store", server?.url ?? "memory", "--store-deadline", "1s"], {});
  const clock = { now: () => Date.now() };
  const metrics = new TollgateMetrics({ clock });
  const config = new URL("./config/bench.yaml", import.meta.url).pathname;
  const load = await loadConfig(config, { schema: FULL_SCHEMA, defaultAlgorithm: "gcra" });
  const built = createStore(settings, { clock, metrics, logger: pino({ level: "silent" }) });
  await built.store.ready();
  const engine = new Engine({ rules: () => load.ruleSet, store: built.store, clock, metrics });
  // The harness's hot scenario: 16 client IPs, one tenant and route, 3 descriptors per request.
  const frames = encodeFrames(scenarioPoints({ scenario: "hot", connections: 16, round: 0 })).map((f) =>
    f.subarray(5),
  );
  let outcomes = 0;
  const turn = async () => {
    const pending = new Array(K);
    for (let i = 0; i < K; i++) {
      const answer = engine.shouldRateLimit(decodeQuery(frames[i & 15], DEFAULT_BOUNDS));
      pending[i] = answer instanceof Promise ? answer.then(encodeAnswerFramed) : encodeAnswerFramed(answer);
    }
    for (const framed of await Promise.all(pending)) if (framed.length > 5) outcomes++;
  };
  for (let i = 0; i < 300; i++) await turn(); // JIT, connections, script load
  const rounds = [];
  for (let r = 0; r < ROUNDS; r++) {
    const before = process.cpuUsage();
    for (let i = 0; i < TURNS; i++) await turn();
    const used = process.cpuUsage(before);
    rounds.push((used.user + used.system) / (K * TURNS));
  }
  if (outcomes !== (300 + ROUNDS * TURNS) * K)
    throw new Error(`${outcomes} answers, expected one per decision`);
  const sorted = [...rounds].sort((a, b) => a - b);
  const median = sorted[Math.floor(sorted.length / 2)];
  console.log(
    `${values.store}, ${K} in flight per turn: ${rounds.map((x) => x.toFixed(2)).join(" ")} µs CPU per decision; ` +
      `min ${sorted[0].toFixed(2)}, median ${median.toFixed(2)}`,
  );
  await built.close();
} finally {
  await server?.stop();
}
