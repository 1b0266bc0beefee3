/**
 * Client CPU of the guard's local fallback (src/store/guard/fallback.ts) per call of 3 takes on an
 * in-process store, with its divided-policy cache (as shipped) and without it (each take's policy
 * divided anew, `--uncached`), for docs/decisions/compiled-config.md. Prints one line per round and
 * the minimum.
 *   npm run build && node bench/fallback-cost.mjs [--uncached] [--rounds N] [--calls N]
 */
import { parseArgs } from "node:util";

const { values } = parseArgs({
  options: {
    uncached: { type: "boolean", default: false },
    rounds: { type: "string", default: "5" },
    calls: { type: "string", default: "100000" },
  },
});
const dist = new URL("../dist/", import.meta.url);
const { LocalFallback, dividePolicy } = await import(new URL("store/guard/fallback.js", dist).href);
const { MemoryStore } = await import(new URL("store/memory/memory-store.js", dist).href);
const { compiledPolicy } = await import(new URL("config/hot-path.js", dist).href);
const { policyOf } = await import(new URL("engine/policy.js", dist).href);

const policy = (rpu) => compiledPolicy(policyOf({ algorithm: "gcra", requestsPerUnit: rpu, unit: "second" }));
const policies = [policy(1_000_000), policy(2_000_000), policy(3_000_000)];
const instances = { count: () => 3 };

/** The fallback as it would be without its cache. */
class Uncached extends LocalFallback {
  async take(takes) {
    const n = Math.max(1, Math.floor(instances.count()));
    const divided = takes.map((t) => ({ key: t.key, cost: t.cost, policy: dividePolicy(t.policy, n) }));
    return (await this.store.take(divided)).map((o) => ({ ...o, policy: "local" }));
  }
}

const batch = Array.from({ length: 256 }, (_, i) =>
  policies.map((p, j) => ({ key: `k${i}:${j}`, cost: 1, policy: p })),
);
const Fallback = values.uncached ? Uncached : LocalFallback;
const fallback = new Fallback({ store: new MemoryStore({ clock: { now: () => Date.now() } }), instances });
const calls = Number(values.calls);
const perCall = [];
for (let r = 0; r < Number(values.rounds); r++) {
  const cpu = process.cpuUsage();
  for (let i = 0; i < calls; i++) await fallback.take(batch[i % batch.length]);
  const used = process.cpuUsage(cpu);
  perCall.push((used.user + used.system) / calls);
}
const fmt = (n) => n.toFixed(3);
console.log(
  `local fallback${values.uncached ? " (uncached)" : ""}, 3 takes per call: ${perCall.map(fmt).join(" ")} µs CPU per call; min ${fmt(Math.min(...perCall))}`,
);
