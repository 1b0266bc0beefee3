import { describe, expect, it } from "vitest";
import type { Policy } from "../../../src/engine/types.js";
import { LeasedStore } from "../../../src/store/lease/leased-store.js";
import { MemoryStore } from "../../../src/store/memory/memory-store.js";
import type { Take } from "../../../src/store/store.js";
import { FakeClock } from "../../helpers/fake-clock.js";

const hot: Policy = { algorithm: "gcra", limit: 1000, periodMs: 60_000, burst: 1000 };
const lease = { size: 40, ttlMs: 1000 };
const take = (cost = 1, key = "{t}:hot"): Take => ({ key, policy: hot, cost, lease });

function setup() {
  const clock = new FakeClock();
  const shared = new MemoryStore({ clock });
  let grants = 0;
  const backend = {
    grant: (t: Take) => {
      grants++;
      return shared.grant(t);
    },
    refund: (t: readonly Take[]) => shared.refund(t),
  };
  const returned: number[] = [];
  const store = new LeasedStore({
    inner: shared,
    backend,
    clock,
    metrics: {
      leaseGranted() {},
      leaseReturned: (n) => returned.push(n),
      leaseLocalHit() {},
      leaseLocalMiss() {},
    },
  });
  const sharedRemaining = async (key = "{t}:hot") =>
    (await shared.take([{ key, policy: hot, cost: 0 }]))[0]?.remaining;
  return { clock, shared, store, grants: () => grants, returned, sharedRemaining };
}

describe("leased store", () => {
  it("never leases a calendar window, even with a lease: every take goes to the shared bucket", async () => {
    const { store, grants } = setup();
    const monthly: Policy = {
      algorithm: "fixed_window",
      limit: 1000,
      periodMs: 30 * 86_400_000,
      burst: 1000,
      calendar: { unit: "month", timeZone: "UTC" },
    };
    for (let i = 0; i < 5; i++) {
      const [o] = await store.take([{ key: "{t}:cal", policy: monthly, cost: 1, lease }]);
      expect(o?.remaining).toBe(1000 - i - 1);
    }
    expect(store.takeNow([{ key: "{t}:cal", policy: monthly, cost: 1, lease }])).toBeUndefined();
    expect(grants()).toBe(0);
    expect(store.leases.size).toBe(0);
  });

  it("serves a hot key from leased batches: few grants, tokens taken before they are spent", async () => {
    const { store, grants, sharedRemaining } = setup();
    for (let i = 0; i < 200; i++) expect((await store.take([take()]))[0]?.allowed).toBe(true);
    // Sizes 10, 20, 40, then 40 at a time, each grant topping the lease up to its size ahead of need.
    expect(grants()).toBeLessThanOrEqual(9);
    const held = store.leases.get("{t}:hot")?.tokens ?? 0;
    expect(await sharedRemaining()).toBe(1000 - 200 - held);
  });

  it("grows the lease for a key that burns through it and never past the size", async () => {
    const { store } = setup();
    const sizes: number[] = [];
    for (let i = 0; i < 300; i++) {
      await store.take([take()]);
      sizes.push(store.leases.get("{t}:hot")?.size ?? 0);
    }
    expect(sizes[0]).toBe(10);
    expect(Math.max(...sizes)).toBe(40);
  });

  it("shrinks the lease as the shared bucket nears empty, so the last tokens are not stranded", async () => {
    const { store, shared } = setup();
    await shared.take([{ key: "{t}:hot", policy: hot, cost: 990 }]);
    await store.take([take()]);
    const l = store.leases.get("{t}:hot");
    expect(l?.tokens).toBe(9); // granted what was there (10), one spent
    expect(l?.size).toBeLessThanOrEqual(1);
  });

  it("admits no more than the shared bucket holds across instances", async () => {
    const clock = new FakeClock();
    const shared = new MemoryStore({ clock });
    const small: Policy = { algorithm: "gcra", limit: 100, periodMs: 3_600_000, burst: 100 };
    const instances = [0, 1, 2].map(
      () => new LeasedStore({ inner: shared, backend: shared, clock, sweepIntervalMs: 60_000 }),
    );
    let admitted = 0;
    for (let i = 0; i < 300; i++) {
      const s = instances[i % 3] as LeasedStore;
      const [o] = await s.take([
        { key: "{t}:x", policy: small, cost: 1, lease: { size: 30, ttlMs: 60_000 } },
      ]);
      if (o?.allowed) admitted++;
    }
    expect(admitted).toBeLessThanOrEqual(100);
    expect(admitted).toBeGreaterThanOrEqual(90);
    for (const s of instances) await s.close();
  });

  it("returns unused tokens when the lease expires and on close", async () => {
    const { store, clock, returned, sharedRemaining } = setup();
    await store.take([take()]);
    const held = store.leases.get("{t}:hot")?.tokens ?? 0;
    expect(held).toBeGreaterThan(0);
    clock.advance(1001);
    await store.sweep();
    expect(returned).toEqual([held]);
    expect(store.leases.size).toBe(0);
    expect(await sharedRemaining()).toBeGreaterThanOrEqual(999);
    await store.take([take()]);
    await store.close();
    expect(returned).toHaveLength(2);
    expect(await sharedRemaining()).toBeGreaterThanOrEqual(999);
  });

  it("asks the shared store for the rest when a request needs more than the lease holds", async () => {
    const { store } = setup();
    await store.take([take()]); // lease of 10, 9 left
    const [big] = await store.take([take(25)]);
    expect(big?.allowed).toBe(true);
  });

  it("denies only when the shared bucket cannot cover the rest, charging nothing", async () => {
    const { store, shared } = setup();
    await shared.take([{ key: "{t}:hot", policy: hot, cost: 995 }]);
    const [o] = await store.take([take(10)]);
    expect(o?.allowed).toBe(false);
    expect(o?.retryAfterMs).toBeGreaterThan(0);
    // The partial grant is held locally, not spent: it serves the next small request.
    expect((await store.take([take(5)]))[0]?.allowed).toBe(true);
  });

  it("keeps a call all-or-nothing: leased tokens are released when another bucket denies", async () => {
    const { store, shared } = setup();
    await store.take([take()]);
    const before = store.leases.get("{t}:hot")?.tokens;
    const tight: Policy = { algorithm: "gcra", limit: 1, periodMs: 60_000, burst: 1 };
    await shared.take([{ key: "{u}:tight", policy: tight, cost: 1 }]);
    const out = await store.take([take(), { key: "{u}:tight", policy: tight, cost: 1 }]);
    expect(out.map((o) => o.allowed)).toEqual([true, false]);
    expect(store.leases.get("{t}:hot")?.tokens).toBe(before);
  });

  it("answers now from local tokens exactly as take would, and leaves everything as it was when it cannot", async () => {
    const twin = [setup(), setup()];
    for (const { store } of twin) await store.take([take()]); // a lease of 10, 9 left
    const [now, later] = twin;
    if (!now || !later) throw new Error("setup");
    expect(now.store.takeNow([take(), take(2)])).toEqual(await later.store.take([take(), take(2)]));
    expect(now.store.leases.get("{t}:hot")?.tokens).toBe(6);
    // More than the lease holds (across two takes of the key), a key without a lease, a peek:
    // no answer, and not a token moved.
    expect(now.store.takeNow([take(4), take(3)])).toBeUndefined();
    expect(now.store.takeNow([take(), take(1, "{t}:cold")])).toBeUndefined();
    expect(now.store.takeNow([take(0)])).toBeUndefined();
    expect(now.store.leases.get("{t}:hot")?.tokens).toBe(6);
    expect(now.store.leases.has("{t}:cold")).toBe(false);
    // An expired lease is take's to return and renew.
    now.clock.advance(1000);
    expect(now.store.takeNow([take()])).toBeUndefined();
    expect(now.grants()).toBe(1);
  });

  it("tops a low lease up in the background, so requests keep being served while the grant travels", async () => {
    const { store, grants } = setup();
    await store.take([take()]); // a first lease of 10
    const before = grants();
    // Spend down to below a quarter of the lease: each of these is answered locally, at once.
    for (let i = 0; i < 8; i++) expect(store.takeNow([take()])?.[0]?.allowed).toBe(true);
    expect(grants()).toBe(before + 1); // the top-up left when the lease fell to 1 of 10 (under 10/4)
    await new Promise((r) => setImmediate(r));
    const lease = store.leases.get("{t}:hot");
    expect(lease?.tokens).toBeGreaterThan(1);
    // Never more than the lease's size held.
    expect(lease?.tokens).toBeLessThanOrEqual(lease?.options.size ?? 0);
  });

  it("refills a key once for a burst of concurrent requests (single-flight)", async () => {
    const { store, grants } = setup();
    const results = await Promise.all(Array.from({ length: 8 }, () => store.take([take()])));
    expect(results.every((r) => r[0]?.allowed)).toBe(true);
    expect(grants()).toBe(1);
  });

  it("keeps serving leased tokens when the shared store fails, then defers to the inner store", async () => {
    const clock = new FakeClock();
    const shared = new MemoryStore({ clock });
    let down = false;
    const backend = {
      grant: (t: Take) => (down ? Promise.reject(new Error("redis gone")) : shared.grant(t)),
      refund: (t: readonly Take[]) => shared.refund(t),
    };
    const innerCalls: number[] = [];
    const inner = {
      kind: "fake-guard",
      take: async (t: readonly Take[]) => {
        innerCalls.push(t.length);
        return t.map(() => ({ allowed: true, remaining: 0, retryAfterMs: 0, resetAfterMs: 0 }));
      },
      reset: async () => {},
      ready: async () => {},
      close: async () => {},
    };
    const store = new LeasedStore({ inner, backend, clock });
    await store.take([take()]);
    down = true;
    const held = store.leases.get("{t}:hot")?.tokens ?? 0;
    for (let i = 0; i < held; i++) expect((await store.take([take()]))[0]?.allowed).toBe(true);
    expect(innerCalls).toEqual([]);
    expect((await store.take([take()]))[0]?.allowed).toBe(true); // decided by the inner store (policy)
    expect(innerCalls).toEqual([1]);
    await store.close();
  });

  it("passes takes without a lease straight to the inner store", async () => {
    const { store, grants } = setup();
    const [o] = await store.take([{ key: "{t}:plain", policy: hot, cost: 1 }]);
    expect(o).toMatchObject({ allowed: true, remaining: 999 });
    expect(grants()).toBe(0);
  });
});

describe("leased fixed windows", () => {
  it("ends a lease at its window end and never carries tokens into the next window", async () => {
    const clock = new FakeClock(3_600_000 * 1000); // on a window boundary
    const shared = new MemoryStore({ clock });
    const store = new LeasedStore({ inner: shared, backend: shared, clock, sweepIntervalMs: 60_000 });
    const perSecond: Policy = { algorithm: "fixed_window", limit: 10, periodMs: 1000, burst: 10 };
    const t: Take = { key: "{w}:k", policy: perSecond, cost: 1, lease: { size: 8, ttlMs: 60_000 } };
    let first = 0;
    for (let i = 0; i < 20; i++) if ((await store.take([t]))[0]?.allowed) first++;
    expect(first).toBe(10);
    clock.advance(1000); // the next window: a fresh count of 10, whatever the lease held
    let second = 0;
    for (let i = 0; i < 20; i++) if ((await store.take([t]))[0]?.allowed) second++;
    expect(second).toBe(10);
    await store.close();
  });

  it("drops, rather than returns, tokens of a window that has ended", async () => {
    const clock = new FakeClock(3_600_000 * 1000);
    const shared = new MemoryStore({ clock });
    const store = new LeasedStore({ inner: shared, backend: shared, clock, sweepIntervalMs: 60_000 });
    const perSecond: Policy = { algorithm: "fixed_window", limit: 10, periodMs: 1000, burst: 10 };
    const t: Take = { key: "{w}:k", policy: perSecond, cost: 1, lease: { size: 8, ttlMs: 60_000 } };
    await store.take([t]); // leases 2 (size 8/4), spends 1
    clock.advance(1000);
    await shared.take([{ key: "{w}:k", policy: perSecond, cost: 3 }]); // the new window's count is 3
    await store.sweep();
    const [peek] = await shared.take([{ key: "{w}:k", policy: perSecond, cost: 0 }]);
    expect(peek?.remaining).toBe(7); // a late refund of the old window's token would have made it 8
    await store.close();
  });
});

describe("leased refills under concurrency", () => {
  it("does not deny a large request that joined a small request's refill while the bucket has plenty", async () => {
    const { store } = setup();
    const [small, big] = await Promise.all([store.take([take(1)]), store.take([take(20)])]);
    expect(small[0]?.allowed).toBe(true);
    expect(big[0]?.allowed).toBe(true);
  });
});
