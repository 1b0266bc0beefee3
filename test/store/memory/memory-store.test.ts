import { describe, expect, it } from "vitest";
import type { Policy } from "../../../src/engine/types.js";
import { MemoryStore } from "../../../src/store/memory/memory-store.js";
import { FakeClock } from "../../helpers/fake-clock.js";

const perSecond: Policy = { algorithm: "gcra", limit: 10, periodMs: 1000, burst: 5 };
const window: Policy = { algorithm: "fixed_window", limit: 2, periodMs: 1000, burst: 2 };

describe("MemoryStore", () => {
  it("holds at most maxBuckets buckets under a flood of distinct keys", async () => {
    const store = new MemoryStore({ clock: new FakeClock(), maxBuckets: 100 });
    for (let i = 0; i < 5_000; i++) await store.take([{ key: `{t:flood}:${i}`, policy: perSecond, cost: 1 }]);
    expect(store.size).toBe(100);
  });

  it("evicts idle buckets first and keeps a recently used one", async () => {
    const store = new MemoryStore({ clock: new FakeClock(), maxBuckets: 10 });
    const hot = { key: "{t:lru}:hot", policy: perSecond, cost: 1 };
    await store.take([hot]);
    for (let i = 0; i < 100; i++) {
      await store.take([{ key: `{t:lru}:${i}`, policy: perSecond, cost: 1 }]);
      await store.take([{ ...hot, cost: 0 }]);
    }
    const [peek] = await store.take([{ ...hot, cost: 0 }]);
    expect(peek?.remaining).toBe(4);
    const [idle] = await store.take([{ key: "{t:lru}:0", policy: perSecond, cost: 0 }]);
    expect(idle?.remaining).toBe(5);
  });

  it("never evicts the key just written, and keeps a key in use through a flood", async () => {
    const store = new MemoryStore({ clock: new FakeClock(), maxBuckets: 4 });
    const busy = { key: "{t:scan}:busy", policy: perSecond, cost: 1 };
    await store.take([busy]);
    for (let i = 0; i < 50; i++) {
      const key = `{t:scan}:${i}`;
      await store.take([{ key, policy: perSecond, cost: 1 }]);
      expect(store.size).toBeLessThanOrEqual(4);
      // The key just charged is still there: a peek sees its charge.
      const [peek] = await store.take([{ key, policy: perSecond, cost: 0 }]);
      expect(peek?.remaining).toBe(4);
      await store.take([{ ...busy, cost: 0 }]);
    }
    const [kept] = await store.take([{ ...busy, cost: 0 }]);
    expect(kept?.remaining).toBe(4);
    const [gone] = await store.take([{ key: "{t:scan}:0", policy: perSecond, cost: 0 }]);
    expect(gone?.remaining).toBe(5);
  });

  it("evicts the least recently used key, not the oldest", async () => {
    const store = new MemoryStore({ clock: new FakeClock(), maxBuckets: 3 });
    const take = (key: string, cost: number) =>
      store.take([{ key: `{t:clock}:${key}`, policy: perSecond, cost }]);
    await take("old", 1);
    await take("once", 1);
    await take("third", 1);
    await take("old", 0); // read: the oldest entry is in use
    await take("new", 1); // full: "once" goes, not the older but since used "old"
    expect((await take("old", 0))[0]?.remaining).toBe(4);
    expect((await take("once", 0))[0]?.remaining).toBe(5);
  });

  it("frees the memory of expired buckets once the sweep interval has passed", async () => {
    const clock = new FakeClock();
    const store = new MemoryStore({ clock, maxBuckets: 1_000, sweepIntervalMs: 5_000 });
    for (let i = 0; i < 500; i++) await store.take([{ key: `{t:sweep}:${i}`, policy: perSecond, cost: 1 }]);
    expect(store.size).toBe(500);
    clock.advance(1_000);
    await store.take([{ key: "{t:sweep}:new", policy: perSecond, cost: 1 }]);
    expect(store.size).toBe(501);
    clock.advance(4_000);
    await store.take([{ key: "{t:sweep}:new", policy: perSecond, cost: 1 }]);
    expect(store.size).toBe(1);
  });

  it("treats a fixed-window counter as gone exactly at the window end", async () => {
    const clock = new FakeClock(1_700_000_000_000);
    const store = new MemoryStore({ clock });
    const take = { key: "{t:edge}:w", policy: window, cost: 2 };
    expect((await store.take([take]))[0]?.resetAfterMs).toBe(1_000);
    clock.advance(999.999);
    expect((await store.take([take]))[0]).toMatchObject({ allowed: false, retryAfterMs: 1 });
    clock.advance(0.001);
    expect((await store.take([take]))[0]).toMatchObject({ allowed: true, remaining: 0, resetAfterMs: 1_000 });
  });

  it("lets takes of one call on the same key see each other's charge", async () => {
    const store = new MemoryStore({ clock: new FakeClock() });
    const twice = [
      { key: "{t:dup}:a", policy: perSecond, cost: 3 },
      { key: "{t:dup}:a", policy: perSecond, cost: 3 },
    ];
    const [first, second] = await store.take(twice);
    expect(first).toMatchObject({ allowed: true, remaining: 5 });
    expect(second).toMatchObject({ allowed: false, remaining: 2, retryAfterMs: 100 });
    const [both] = await store.take([{ key: "{t:dup}:a", policy: perSecond, cost: 2 }]);
    // The denied call charged nothing: the bucket is still full.
    expect(both).toMatchObject({ allowed: true, remaining: 3 });
  });

  it("keeps sub-millisecond time: the clock is read in whole microseconds", async () => {
    const clock = new FakeClock(1_700_000_000_000.25);
    const store = new MemoryStore({ clock });
    await store.take([{ key: "{t:us}:a", policy: perSecond, cost: 1 }]);
    clock.advance(99.75);
    const [peek] = await store.take([{ key: "{t:us}:a", policy: perSecond, cost: 0 }]);
    expect(peek).toEqual({ allowed: true, remaining: 4, retryAfterMs: 0, resetAfterMs: 1 });
  });

  it("refuses a bucket bound that is not a positive integer", () => {
    expect(() => new MemoryStore({ clock: new FakeClock(), maxBuckets: 0 })).toThrow(/maxBuckets/);
  });

  it("is empty after close", async () => {
    const store = new MemoryStore({ clock: new FakeClock() });
    await store.take([{ key: "{t:close}:a", policy: perSecond, cost: 1 }]);
    await store.close();
    expect(store.size).toBe(0);
  });
});
