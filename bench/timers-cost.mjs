/**
 * CPU per deadline of the two timer implementations of a build's timers.js (up to 4fdec35; the queued
 * ones were removed after this measurement, docs/decisions/timers.md): Node's timers (`nodeTimers`,
 * setTimeout + unref + clearTimeout) and `queuedTimers` (one FIFO per duration behind one Node timer).
 * A turn sets `--per-turn` deadlines of 1 s (as a busy event-loop turn of the bench sets one per call)
 * and the next turn clears them (the answers), so about two turns' worth are pending at any time.
 * Rounds alternate the two; prints CPU µs per set + clear pair per round and the minimum of each.
 *   git worktree add /tmp/t 4fdec35 && (cd /tmp/t && npm ci && npm run build)
 *   node --max-semi-space-size=64 bench/timers-cost.mjs --dist /tmp/t/dist [--rounds N] [--turns N] [--per-turn N]
 */
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { parseArgs } from "node:util";

const { values } = parseArgs({
  options: {
    rounds: { type: "string", default: "6" },
    turns: { type: "string", default: "4000" },
    "per-turn": { type: "string", default: "128" },
    dist: { type: "string", default: new URL("../dist", import.meta.url).pathname },
  },
});
const { nodeTimers, queuedTimers } = await import(pathToFileURL(resolve(values.dist, "timers.js")).href);
const rounds = Number(values.rounds);
const turns = Number(values.turns);
const perTurn = Number(values["per-turn"]);
if (!(rounds >= 1 && turns >= 1 && perTurn >= 1)) throw new Error("--rounds, --turns, --per-turn ≥ 1");

const noop = () => {};

/** CPU µs per set + clear over `turns` event-loop turns on `timers`. */
function run(timers) {
  return new Promise((done) => {
    let prev = [];
    let turn = 0;
    const cpu0 = process.cpuUsage();
    const step = () => {
      for (const h of prev) timers.clear(h);
      if (turn++ === turns) {
        const { user, system } = process.cpuUsage(cpu0);
        done((user + system) / (turns * perTurn));
        return;
      }
      const next = new Array(perTurn);
      for (let i = 0; i < perTurn; i++) next[i] = timers.set(noop, 1000);
      prev = next;
      setImmediate(step);
    };
    setImmediate(step);
  });
}

const variants = { node: nodeTimers, queued: queuedTimers() };
const best = { node: Number.POSITIVE_INFINITY, queued: Number.POSITIVE_INFINITY };
for (let r = 0; r < rounds; r++) {
  const line = [];
  for (const name of r % 2 === 0 ? ["node", "queued"] : ["queued", "node"]) {
    const us = await run(variants[name]);
    best[name] = Math.min(best[name], us);
    line.push(`${name} ${us.toFixed(3)}`);
  }
  console.log(`round ${r + 1}: ${line.join(", ")} µs per deadline`);
}
console.log(`min: node ${best.node.toFixed(3)}, queued ${best.queued.toFixed(3)} µs per deadline`);
