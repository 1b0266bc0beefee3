/**
 * The same answers on every store: the reference behaviour cases (reference-cases.ts) replayed
 * through the engine on the store tollgate builds for `--store memory`, a single Redis and a
 * 3-master Redis Cluster (createStore: guard, per-master guards, lease layer, as `serve` runs them),
 * expecting identical codes and limit_remaining request by request.
 */
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseConfigText } from "../../src/config/document.js";
import { Engine } from "../../src/engine/decide.js";
import { noopMetrics } from "../../src/engine/metrics-port.js";
import { type QueryDescriptor, type RateLimitQuery, systemClock, type Unit } from "../../src/engine/types.js";
import { TollgateMetrics } from "../../src/metrics/metrics.js";
import { loadSettings } from "../../src/settings.js";
import { type BuiltStore, createStore } from "../../src/store/create.js";
import { type RedisCluster, type RedisServer, startCluster, startRedis } from "../helpers/redis.js";
import { REFERENCE_CASES } from "./reference-cases.js";

const domainOf = (i: number) => `case${String(i + 1).padStart(2, "0")}`;

/** Every case's rules in one rule set, one domain per case. */
function ruleSet() {
  const text = (i: number) =>
    `domain: ${domainOf(i)}\ndescriptors:\n${REFERENCE_CASES[i]?.rules.replace(/^/gm, "  ")}\n`;
  const docs = REFERENCE_CASES.map((_, i) => parseConfigText(`${domainOf(i)}.yaml`, text(i)).ruleSet);
  return { domains: new Map(docs.flatMap((d) => [...d.domains])), files: [] };
}

function descriptor(text: string): QueryDescriptor {
  const m = /^([^*@]+)(?:\*(\d+))?(?:@(\d+)\/(\w+))?$/.exec(text.trim());
  if (!m?.[1]) throw new Error(`bad descriptor ${text}`);
  return {
    entries: m[1]
      .split(",")
      .map((kv) => ({ key: kv.slice(0, kv.indexOf("=")), value: kv.slice(kv.indexOf("=") + 1) })),
    hitsAddend: m[2] === undefined ? undefined : Number(m[2]),
    limit: m[3] === undefined ? undefined : { requestsPerUnit: Number(m[3]), unit: m[4] as Unit },
  };
}

/** A request line as queries (expanded `xN`). */
function queries(line: string, domain: string): RateLimitQuery[] {
  let text = line;
  let times = 1;
  let hits = 0;
  let target = domain;
  text = text.replace(/ x(\d+)$/, (_, n: string) => {
    times = Number(n);
    return "";
  });
  text = text.replace(/ \+(\d+)$/, (_, n: string) => {
    hits = Number(n);
    return "";
  });
  text = text.replace(/^@(\S+) /, (_, d: string) => {
    target = d;
    return "";
  });
  const q = { domain: target, descriptors: text.split(";").map(descriptor), hitsAddend: hits };
  return Array.from({ length: times }, () => q);
}

/** Replay every case on one store; per case, one line per request: code and each status. */
async function replay(built: BuiltStore): Promise<string[][]> {
  const rules = ruleSet();
  const engine = new Engine({
    rules: () => rules,
    store: built.store,
    clock: systemClock,
    metrics: noopMetrics,
  });
  const out: string[][] = [];
  for (const [i, c] of REFERENCE_CASES.entries()) {
    const lines: string[] = [];
    for (const line of c.requests)
      for (const q of queries(line, domainOf(i))) {
        const a = await engine.shouldRateLimit(q);
        lines.push(`${a.overallCode} ${a.statuses.map((s) => `${s.code}:${s.limitRemaining}`).join(" ")}`);
      }
    out.push(lines);
  }
  return out;
}

/** The store `serve --store URL` builds; a generous deadline so a loaded machine never decides by policy. */
function storeFor(url: string): BuiltStore {
  const s = loadSettings(["--store", url, "--store-deadline", "5s", "--breaker-failures", "1000"], {});
  return createStore(
    { ...s, onStoreError: "error" },
    {
      clock: systemClock,
      metrics: new TollgateMetrics({ maxSeries: 100, clock: systemClock }),
      logger: pino({ level: "silent" }),
    },
  );
}

let single: RedisServer;
let cluster: RedisCluster;
const results = new Map<string, string[][]>();
beforeAll(async () => {
  [single, cluster] = await Promise.all([startRedis(), startCluster({ masters: 3 })]);
  for (const [name, url] of [
    ["memory", "memory"],
    ["redis", single.url],
    ["redis-cluster", cluster.url],
  ] as const) {
    const built = storeFor(url);
    await built.store.ready();
    try {
      results.set(name, await replay(built));
    } finally {
      await built.close();
    }
  }
}, 120_000);
afterAll(async () => {
  await cluster?.stop();
  await single?.stop();
});

describe("the reference behaviour cases on every store", () => {
  it("has the cases it names", () => {
    expect(REFERENCE_CASES.length).toBe(34);
  });

  it.each(
    REFERENCE_CASES.map((c, i) => [i + 1, c.name, i] as const),
  )("case %i (%s): memory, Redis and Redis Cluster answer alike, request by request", (_n, _name, i) => {
    const memory = results.get("memory")?.[i];
    expect(memory?.length).toBeGreaterThan(0);
    expect(results.get("redis")?.[i]).toEqual(memory);
    expect(results.get("redis-cluster")?.[i]).toEqual(memory);
  });

  it("reports a bucket as it is after a denial it took no part in ([A 5/h, B 1/h] twice: A keeps 4)", async () => {
    // The two buckets of case 5 live on different masters, so the cluster decides them apart.
    const client = cluster.nodes[0]?.client();
    const owner = async (key: string) => {
      const slot = Number(await client?.cluster("KEYSLOT", key));
      const slots = (await client?.cluster("SLOTS")) ?? [];
      return slots.find(([from, to]) => slot >= from && slot <= to)?.[2]?.[1];
    };
    expect(await owner("tl:v1:{case05|a=2}:g0")).not.toBe(await owner("tl:v1:{case05|b=2}:g0"));
    expect(results.get("redis-cluster")?.[4]).toEqual([
      "OK OK:4 OK:0",
      "OVER_LIMIT OK:4 OVER_LIMIT:0",
      "OVER_LIMIT OK:4 OVER_LIMIT:0",
    ]);
  });
});
