/**
 * Summarise a V8 `.cpuprofile` (from `npm run bench -- --cpu-prof DIR`): self time by area of the
 * hot path and the top functions, as Markdown. Idle time is left out of the percentages.
 *   node bench/profile-top.mjs DIR/redis.cpuprofile [--top 15]
 */
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";

/** Areas in match order: the first whose test matches a frame's URL (or name) wins. */
const AREAS = [
  ["gc", (_url, name) => name === "(garbage collector)"],
  ["idle", (_url, name) => name === "(idle)"],
  ["program (native, unattributed)", (_url, name) => name === "(program)"],
  ["protobuf-es decode/encode", (url) => url.includes("@bufbuild/protobuf") || url.includes("/src/gen/")],
  ["ioredis + RESP parser", (url) => url.includes("ioredis") || url.includes("redis-parser")],
  ["prom-client", (url) => url.includes("prom-client")],
  ["lru-cache", (url) => url.includes("lru-cache")],
  ["tollgate protocol/ (grpc, codec)", (url) => url.includes("/dist/protocol/")],
  ["tollgate engine/ (match, keys, decide, headers)", (url) => url.includes("/dist/engine/")],
  ["tollgate store/", (url) => url.includes("/dist/store/")],
  ["tollgate metrics/", (url) => url.includes("/dist/metrics/")],
  ["tollgate other", (url) => url.includes("/dist/")],
  [
    "node http2 / net / streams",
    (url) => /node:internal\/(http2|net|stream|streams|buffer|timers)/.test(url),
  ],
  ["node other", (url) => url.startsWith("node:")],
  ["native / other", () => true],
];

function areaOf(frame) {
  return AREAS.find(([, test]) => test(frame.url, frame.functionName))[0];
}

/** Self time (µs) per profile node id. */
function selfTimes(profile) {
  const self = new Map();
  profile.samples.forEach((id, i) => {
    self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0));
  });
  return self;
}

/** `{ totalMs, areas: [[name, µs]], functions: [[label, area, µs]] }`, busy time only. */
export function summarise(profile) {
  const self = selfTimes(profile);
  const areas = new Map();
  const functions = new Map();
  for (const node of profile.nodes) {
    const us = self.get(node.id) ?? 0;
    if (us === 0) continue;
    const frame = node.callFrame;
    const area = areaOf(frame);
    if (area === "idle") continue;
    areas.set(area, (areas.get(area) ?? 0) + us);
    const file = frame.url.replace(/^.*\/(dist|node_modules)\//, "").replace(/^file:\/\//, "");
    const label = `${frame.functionName || "(anonymous)"} ${file}:${frame.lineNumber + 1}`;
    const prev = functions.get(label) ?? [label, area, 0];
    functions.set(label, [label, area, prev[2] + us]);
  }
  const byTime = (a, b) => b.at(-1) - a.at(-1);
  const busy = [...areas.values()].reduce((a, b) => a + b, 0);
  return { busyUs: busy, areas: [...areas].sort(byTime), functions: [...functions.values()].sort(byTime) };
}

function main() {
  const { values, positionals } = parseArgs({ allowPositionals: true, options: { top: { type: "string" } } });
  const top = Number(values.top ?? 15);
  for (const file of positionals) {
    const { busyUs, areas, functions } = summarise(JSON.parse(readFileSync(file, "utf8")));
    const pct = (us) => `${((100 * us) / busyUs).toFixed(1)}%`;
    process.stdout.write(
      `\n${file}: ${(busyUs / 1000).toFixed(0)} ms busy\n\n| area | self |\n| --- | --- |\n`,
    );
    for (const [name, us] of areas) process.stdout.write(`| ${name} | ${pct(us)} |\n`);
    process.stdout.write(`\n| function | area | self |\n| --- | --- | --- |\n`);
    for (const [label, area, us] of functions.slice(0, top)) {
      process.stdout.write(`| \`${label}\` | ${area} | ${pct(us)} |\n`);
    }
  }
}

if (import.meta.url === `file://${process.argv[1]}`) main();
