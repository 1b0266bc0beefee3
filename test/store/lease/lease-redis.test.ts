import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Policy } from "../../../src/engine/types.js";
import { systemClock } from "../../../src/engine/types.js";
import { LeasedStore } from "../../../src/store/lease/leased-store.js";
import { MemoryStore } from "../../../src/store/memory/memory-store.js";
import { RedisStore } from "../../../src/store/redis/redis-store.js";
import { FakeClock } from "../../helpers/fake-clock.js";
import { type RedisServer, startRedis } from "../../helpers/redis.js";

const perHour: Policy = { algorithm: "gcra", limit: 100, periodMs: 3_600_000, burst: 100 };
const window: Policy = { algorithm: "fixed_window", limit: 50, periodMs: 3_600_000, burst: 50 };

describe("lease.lua on a real redis-server", () => {
  let server: RedisServer;
  let redis: RedisStore;
  beforeAll(async () => {
    server = await startRedis();
    redis = new RedisStore({ url: server.url, commandTimeoutMs: 2000 });
    await redis.ready();
  });
  afterAll(async () => {
    await redis?.close();
    await server?.stop();
  });

  it("grants what is there up to the wanted count, like MemoryStore.grant", async () => {
    const memory = new MemoryStore({ clock: new FakeClock() });
    for (const policy of [perHour, window]) {
      const key = `{lease:${policy.algorithm}}:k`;
      const wants = [30, 30, 30, 30, 5];
      for (const want of wants) {
        const r = await redis.grant({ key, policy, cost: want });
        const m = await memory.grant({ key, policy, cost: want });
        expect(r.granted).toBe(m.granted);
        expect(r.remaining).toBe(m.remaining);
      }
      expect(await server.client().pttl(key)).toBeGreaterThan(0);
    }
  });

  it("shares one bucket with direct takes and gets returned tokens back", async () => {
    const key = "{lease:shared}:k";
    const g = await redis.grant({ key, policy: perHour, cost: 40 });
    expect(g).toMatchObject({ granted: 40, remaining: 60 });
    const [direct] = await redis.take([{ key, policy: perHour, cost: 1 }]);
    expect(direct?.remaining).toBe(59);
    await redis.refund([{ key, policy: perHour, cost: 40 }]);
    const [peek] = await redis.take([{ key, policy: perHour, cost: 0 }]);
    expect(peek?.remaining).toBe(99);
  });

  it("three instances hammering one hot key admit at most its limit, with few Redis calls per decision", async () => {
    const stores = await Promise.all(
      [0, 1, 2].map(async () => {
        const shared = new RedisStore({ url: server.url, commandTimeoutMs: 2000 });
        await shared.ready();
        return {
          shared,
          leased: new LeasedStore({
            inner: shared,
            backend: shared,
            clock: systemClock,
            grantDeadlineMs: 2000,
          }),
        };
      }),
    );
    const hot: Policy = { algorithm: "fixed_window", limit: 3000, periodMs: 3_600_000, burst: 3000 };
    const key = "{lease:hot}:k";
    let admitted = 0;
    const decisions = 6000;
    await Promise.all(
      stores.map(async ({ leased }) => {
        for (let i = 0; i < decisions / 3 / 50; i++) {
          const batch = await Promise.all(
            Array.from({ length: 50 }, () =>
              leased.take([{ key, policy: hot, cost: 1, lease: { size: 200, ttlMs: 60_000 } }]),
            ),
          );
          admitted += batch.filter((o) => o[0]?.allowed).length;
        }
      }),
    );
    const calls = stores.reduce((n, s) => n + s.shared.roundTrips, 0) - 3; // minus the ready() PINGs
    const stranded = stores.reduce((n, s) => n + (s.leased.leases.get(key)?.tokens ?? 0), 0);
    expect(admitted).toBeLessThanOrEqual(3000);
    expect(admitted + stranded).toBe(3000); // every token is either spent or held by a lease
    expect(stranded).toBeLessThanOrEqual(3 * 200);
    expect(calls / decisions).toBeLessThanOrEqual(0.02);
    console.info(
      `lease: ${admitted} admitted of 6000, ${stranded} stranded, ${(calls / decisions).toFixed(4)} Redis calls/decision`,
    );
    for (const s of stores) await s.leased.close();
    const [after] = await redis.take([{ key, policy: hot, cost: 0 }]);
    expect(after?.remaining).toBe(stranded); // closing returned every leased token
  });
});
