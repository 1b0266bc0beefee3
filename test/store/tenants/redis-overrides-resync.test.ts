/**
 * The tenant override table's periodic resync (it catches notices lost while disconnected) runs on the
 * injected timers: the fake clock moves it, no test sleeps for it.
 */
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { tenantTiersKey } from "../../../src/engine/keys.js";
import type { OverrideTable } from "../../../src/store/tenants/overrides.js";
import { RedisTenantOverrides } from "../../../src/store/tenants/redis-overrides.js";
import { FakeClock, flush } from "../../helpers/fake-clock.js";
import { type RedisServer, startRedis } from "../../helpers/redis.js";

describe("tenant overrides resync", () => {
  let redis: RedisServer;
  beforeAll(async () => {
    redis = await startRedis();
  }, 30_000);
  afterAll(async () => {
    await redis?.stop();
  });

  it("reloads the table every resyncMs of the injected timers, also a change no notice announced", async () => {
    const clock = new FakeClock();
    const client = new Redis(redis.url);
    const subscriber = new Redis(redis.url);
    // Both connected before open: the subscriber's first "ready" (which reloads) is behind us.
    await Promise.all([client.ping(), subscriber.ping()]);
    const store = new RedisTenantOverrides({
      client,
      subscriber,
      keyPrefix: "t:",
      resyncMs: 1_000,
      timers: clock,
    });
    const tables: OverrideTable[] = [];
    try {
      expect((await store.open((t) => tables.push(t))).size).toBe(0);
      expect(clock.pendingTimers).toBe(1);
      // Written behind the store's back: no PUBLISH, so only a resync can see it.
      await redis.client().hset(tenantTiersKey("t:"), "acme", "gold");
      // A reload's HGETALL goes out on `client` before this PING, so it has been answered by then.
      const settled = async () => {
        await client.ping();
        await flush();
      };
      await clock.tick(999);
      await settled();
      expect(tables).toEqual([]);
      await clock.tick(1);
      await settled();
      expect(tables.map((t) => t.get("acme"))).toEqual(["gold"]);
      await redis.client().hset(tenantTiersKey("t:"), "globex", "silver");
      await clock.tick(1_000);
      await settled();
      expect(tables.at(-1)?.get("globex")).toBe("silver");
      expect(clock.pendingTimers).toBe(1);
    } finally {
      await store.close();
    }
    expect(clock.pendingTimers).toBe(0);
  }, 30_000);
});
