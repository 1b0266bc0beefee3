import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { InstanceRegistry } from "../../../src/store/instances/registry.js";
import { FakeClock } from "../../helpers/fake-clock.js";
import { type RedisServer, startRedis } from "../../helpers/redis.js";

describe("InstanceRegistry", () => {
  let redis: RedisServer;
  beforeAll(async () => {
    redis = await startRedis();
  });
  afterAll(async () => {
    await redis.stop();
  });

  it("counts every instance that beat within the TTL", async () => {
    const key = "tl:v1:{instances-a}";
    const clock = new FakeClock(1_000_000);
    const a = new InstanceRegistry({ redis: redis.client(), id: "a", clock, key, ttlMs: 15_000 });
    const b = new InstanceRegistry({ redis: redis.client(), id: "b", clock, key, ttlMs: 15_000 });
    expect(a.count()).toBe(1);
    await a.beat();
    expect(await b.beat()).toBe(2);
    expect(await a.beat()).toBe(2);
    expect(a.count()).toBe(2);
  });

  it("stops counting an instance whose heartbeat is older than the TTL", async () => {
    const key = "tl:v1:{instances-b}";
    const clock = new FakeClock(1_000_000);
    const old = new InstanceRegistry({ redis: redis.client(), id: "old", clock, key, ttlMs: 15_000 });
    const now = new InstanceRegistry({ redis: redis.client(), id: "now", clock, key, ttlMs: 15_000 });
    await old.beat();
    clock.advance(14_000);
    expect(await now.beat()).toBe(2);
    clock.advance(6_000);
    expect(await now.beat()).toBe(1);
  });

  it("deregisters on stop and gives the set a TTL", async () => {
    const key = "tl:v1:{instances-c}";
    const clock = new FakeClock(1_000_000);
    const c = redis.client();
    const a = new InstanceRegistry({ redis: c, id: "a", clock, key });
    const b = new InstanceRegistry({ redis: c, id: "b", clock, key });
    await a.beat();
    await b.beat();
    expect(await c.pttl(key)).toBeGreaterThan(0);
    await b.stop();
    expect(await a.beat()).toBe(1);
  });

  it("keeps the last count seen when Redis stops answering", async () => {
    const key = "tl:v1:{instances-d}";
    const clock = new FakeClock(1_000_000);
    const other = new InstanceRegistry({ redis: redis.client(), id: "x", clock, key });
    const c = redis.client();
    const self = new InstanceRegistry({ redis: c, id: "self", clock, key });
    await other.beat();
    await self.beat();
    c.disconnect();
    await expect(self.beat()).rejects.toThrow();
    expect(self.count()).toBe(2);
  });

  it("uses a pinned count and never talks to Redis", async () => {
    const c = redis.client();
    c.disconnect();
    const counts: number[] = [];
    const pinned = new InstanceRegistry({
      redis: c,
      id: "p",
      clock: new FakeClock(0),
      pinned: 3,
      onCount: (n) => counts.push(n),
    });
    expect(await pinned.beat()).toBe(3);
    expect(pinned.count()).toBe(3);
    expect(counts).toEqual([]);
    // Reported once at start (the tollgate_instances gauge), never again.
    pinned.start();
    pinned.start();
    await pinned.stop();
    expect(counts).toEqual([3]);
  });

  it("reports the first beat's count even when it is the initial 1 (a single live instance)", async () => {
    const counts: number[] = [];
    const alone = new InstanceRegistry({
      redis: redis.client(),
      id: "alone",
      clock: new FakeClock(2_000_000),
      key: "tl:v1:{instances-alone}",
      onCount: (n) => counts.push(n),
    });
    expect(await alone.beat()).toBe(1);
    await alone.beat();
    expect(counts).toEqual([1]);
  });

  it("reports the first count and then each new count once", async () => {
    const key = "tl:v1:{instances-e}";
    const counts: number[] = [];
    const clock = new FakeClock(1_000_000);
    const a = new InstanceRegistry({
      redis: redis.client(),
      id: "a",
      clock,
      key,
      onCount: (n) => counts.push(n),
    });
    const b = new InstanceRegistry({ redis: redis.client(), id: "b", clock, key });
    await a.beat();
    await b.beat();
    await a.beat();
    await a.beat();
    expect(counts).toEqual([1, 2]);
  });
});
