/**
 * Memory the in-process store holds per live bucket: fills N GCRA buckets whose keys are built by
 * tollgate's own key codec for `[tenant=<8 digits>, route_class=read]` in domain `edge`, then reads
 * the heap growth after a full GC (the store kept reachable) and the process RSS. Sizes the memory
 * overlay of deploy/kubernetes (docs/capacity.md, In-process store).
 *   npm run build && node --expose-gc --max-semi-space-size=64 bench/memory-buckets.mjs [N]
 */
import { bucketKey } from "../dist/engine/keys.js";
import { MemoryStore } from "../dist/store/memory/memory-store.js";

const n = Number(process.argv[2] ?? 1_000_000);
const gc = globalThis.gc;
if (typeof gc !== "function") throw new Error("run with node --expose-gc");
const policy = { algorithm: "gcra", limit: 100, periodMs: 1000, burst: 200 };
const store = new MemoryStore({ maxBuckets: n, clock: { now: () => Date.now() } });
const key = (i) =>
  bucketKey({
    prefix: "",
    domain: "edge",
    entries: [
      { key: "tenant", value: `tenant-${String(i).padStart(8, "0")}` },
      { key: "route_class", value: "read" },
    ],
    limitIndex: 0,
    algorithm: "gcra",
  });

gc();
const before = process.memoryUsage();
for (let i = 0; i < n; i += 1000) {
  const takes = [];
  for (let j = i; j < Math.min(n, i + 1000); j++) takes.push({ key: key(j), policy, cost: 1 });
  await store.take(takes);
}
gc();
const after = process.memoryUsage();
const mib = (b) => Number((b / 1048576).toFixed(1));
console.log(
  JSON.stringify({
    buckets: n,
    keyChars: key(0).length,
    heapMiB: mib(after.heapUsed - before.heapUsed),
    bytesPerBucket: Math.round((after.heapUsed - before.heapUsed) / n),
    rssMiB: mib(after.rss),
    // Keeps the store reachable until after the measurement.
    stored: store !== undefined,
  }),
);
