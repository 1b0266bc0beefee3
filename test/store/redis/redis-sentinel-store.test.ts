import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Policy } from "../../../src/engine/types.js";
import { RedisStore } from "../../../src/store/redis/redis-store.js";
import { type RedisServer, startRedis } from "../../helpers/redis.js";
import { type RedisSentinel, startSentinel } from "../../helpers/redis-sentinel.js";

const gcra: Policy = { algorithm: "gcra", limit: 5, periodMs: 60_000, burst: 5 };

describe("RedisStore through Redis Sentinel", () => {
  let master: RedisServer;
  let sentinel: RedisSentinel;
  let store: RedisStore | undefined;
  beforeAll(async () => {
    master = await startRedis();
    sentinel = await startSentinel({ masterPort: master.port, masterName: "tollgate" });
  });
  afterAll(async () => {
    await store?.close();
    await sentinel?.stop();
    await master?.stop();
  });

  it("finds the master through the sentinel and charges buckets there", async () => {
    store = new RedisStore({ url: sentinel.url });
    await store.ready();
    expect(store.kind).toBe("redis");
    const out = await store.take([{ key: "tl:v1:{s}:g0", policy: gcra, cost: 2 }]);
    expect(out[0]).toMatchObject({ allowed: true, remaining: 3 });
    expect(Number(await master.client().get("tl:v1:{s}:g0"))).toBeGreaterThan(0);
  });
});
