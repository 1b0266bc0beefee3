/**
 * In-process cost of one decision, without HTTP/2: decode (request-wire), the engine on the memory
 * store, encode (response-wire, into the framed buffer the server sends), each timed over the bench
 * traffic's 16 hot-scenario frames.
 *   npm run build && node bench/inproc.mjs [hot|tenants] [iterations]
 * Prints µs per call for each stage and for the whole chain. A profile: add `node --cpu-prof`.
 */
import { FULL_SCHEMA } from "../dist/config/full-schema.js";
import { loadConfig } from "../dist/config/load.js";
import { Engine } from "../dist/engine/decide.js";
import { TollgateMetrics } from "../dist/metrics/metrics.js";
import { DEFAULT_BOUNDS, decodeQuery, encodeAnswerFramed as encodeAnswer } from "../dist/protocol/codec.js";
import { MemoryStore } from "../dist/store/memory/memory-store.js";
import { encodeFrames, scenarioPoints } from "./frames.mjs";

const scenario = process.argv[2] ?? "hot";
const n = Number(process.argv[3] ?? 200_000);
const clock = { now: () => Date.now() };
const metrics = new TollgateMetrics({ clock });
const config = new URL("./config/bench.yaml", import.meta.url).pathname;
const load = await loadConfig(config, { schema: FULL_SCHEMA, defaultAlgorithm: "gcra" });
const store = new MemoryStore({ clock, maxBuckets: 100_000 });
const engine = new Engine({ rules: () => load.ruleSet, store, clock, metrics });
const frames = encodeFrames(scenarioPoints({ scenario, connections: 16, round: 0 })).map((f) =>
  f.subarray(5),
);

async function chain(count) {
  for (let i = 0; i < count; i++)
    encodeAnswer(await engine.shouldRateLimit(decodeQuery(frames[i & 15], DEFAULT_BOUNDS)));
}
await chain(50_000); // JIT warm-up
let decode = 0;
let decide = 0;
let encode = 0;
const started = performance.now();
for (let i = 0; i < n; i++) {
  const a = performance.now();
  const q = decodeQuery(frames[i & 15], DEFAULT_BOUNDS);
  const b = performance.now();
  const answer = await engine.shouldRateLimit(q);
  const c = performance.now();
  encodeAnswer(answer);
  encode += performance.now() - c;
  decide += c - b;
  decode += b - a;
}
const total = performance.now() - started;
const us = (ms) => ((ms * 1000) / n).toFixed(2);
console.log(
  `${scenario}, ${n} decisions: decode ${us(decode)} µs, engine ${us(decide)} µs, encode ${us(encode)} µs, whole ${us(total)} µs`,
);
