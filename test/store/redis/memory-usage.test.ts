import type { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Policy } from "../../../src/engine/types.js";
import { RedisStore } from "../../../src/store/redis/redis-store.js";
import { type RedisServer, startRedis } from "../../helpers/redis.js";

// Engine keys: version, hash tag of domain + descriptor entries, algorithm + limit index. MEMORY USAGE
// is 40 B (dict entry + integer-encoded value object) plus the key's allocation, so figures are taken
// for a one-entry key of 28 chars (jemalloc's 32 B class) and a two-entry key of 53 chars.
const shortKey = (i: number) => `tl:v1:{edge|tenant=t${i.toString(36).padStart(4, "0")}}:g0`;
const typicalKey = (i: number) =>
  `tl:v1:{edge|tenant=t${i.toString(36).padStart(7, "0")},route_class=read}:g0`;
// A day-long period: a GCRA key lives until its bucket is full again (here 864 s after one take), so
// the first keys cannot expire while 10 000 are written on a loaded machine.
const gcra: Policy = { algorithm: "gcra", limit: 100, periodMs: 86_400_000, burst: 100 };
const window: Policy = { algorithm: "fixed_window", limit: 100, periodMs: 60_000, burst: 100 };

/** Per-key figures for docs/capacity.md: MEMORY USAGE (key + value + object) and used_memory per key. */
describe("Redis memory per bucket key", () => {
  let server: RedisServer;
  let admin: Redis;
  let store: RedisStore;
  beforeAll(async () => {
    server = await startRedis();
    admin = server.client();
    // A generous timeout: this test writes 10 000 keys while other suites share the CPU.
    store = new RedisStore({ url: server.url, commandTimeoutMs: 5000 });
    await store.ready();
  });
  afterAll(async () => {
    await store?.close();
    await server?.stop();
  });

  const measure = async (policy: Policy, keyOf: (i: number) => string) => {
    await admin.flushall();
    const base = Number(/used_memory:(\d+)/.exec(await admin.info("memory"))?.[1]);
    const n = 10_000;
    for (let i = 0; i < n; i += 250) {
      const batch = Array.from({ length: 250 }, (_, j) =>
        store.take([{ key: keyOf(i + j), policy, cost: 1 }]),
      );
      await Promise.all(batch);
    }
    const after = Number(/used_memory:(\d+)/.exec(await admin.info("memory"))?.[1]);
    const usage = Number(await admin.call("MEMORY", "USAGE", keyOf(0), "SAMPLES", "0"));
    const encoding = await admin.object("ENCODING", keyOf(0));
    const line = `${policy.algorithm} key of ${keyOf(0).length} chars: MEMORY USAGE ${usage} B, used_memory ${((after - base) / n).toFixed(1)} B/key`;
    console.info(line);
    return { usage, encoding };
  };

  it("warms up (scripts compiled, dicts allocated) before measuring", async () => {
    expect((await measure(gcra, shortKey)).encoding).toBe("int");
  });

  it("keeps a GCRA bucket with a one-entry key within 80 bytes, stored as an integer", async () => {
    const g = await measure(gcra, shortKey);
    expect(g.encoding).toBe("int");
    expect(g.usage).toBeLessThanOrEqual(80);
    expect((await measure(gcra, typicalKey)).usage).toBeLessThanOrEqual(112);
  });

  it("keeps a fixed-window counter the same size as a GCRA bucket", async () => {
    const f = await measure(window, shortKey);
    expect(f.encoding).toBe("int");
    expect(f.usage).toBeLessThanOrEqual(80);
  });
});
