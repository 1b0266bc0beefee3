import type { Redis } from "ioredis";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import type { Policy } from "../../../src/engine/types.js";
import { RedisStore } from "../../../src/store/redis/redis-store.js";
import { StoreError, type Take } from "../../../src/store/store.js";
import { keysWithoutTtl, type RedisServer, startRedis } from "../../helpers/redis.js";
import { recordingMetrics } from "./recording-metrics.js";

const gcra: Policy = { algorithm: "gcra", limit: 10, periodMs: 60_000, burst: 10 };
const window: Policy = { algorithm: "fixed_window", limit: 5, periodMs: 60_000, burst: 5 };
let seq = 0;
const key = () => `tl:v1:{test}:${process.pid}:${seq++}`;
const take = (k: string, policy: Policy, cost = 1): Take => ({ key: k, policy, cost });

describe("RedisStore on a single redis-server", () => {
  let server: RedisServer;
  let admin: Redis;
  const stores: RedisStore[] = [];
  const open = async (extra: Partial<ConstructorParameters<typeof RedisStore>[0]> = {}) => {
    const s = new RedisStore({ url: server.url, ...extra });
    stores.push(s);
    await s.ready();
    return s;
  };

  beforeAll(async () => {
    server = await startRedis();
    admin = server.client();
  });
  afterEach(async () => {
    expect(await keysWithoutTtl(admin)).toEqual([]);
  });
  afterAll(async () => {
    await Promise.all(stores.map((s) => s.close()));
    await server?.stop();
  });

  it("reports kind redis and connects and PINGs in ready()", async () => {
    const metrics = recordingMetrics();
    const store = await open({ metrics });
    expect(store.kind).toBe("redis");
    expect(metrics.roundTrips).toBe(1);
  });

  it("charges a GCRA bucket until its burst is spent, then denies with a retry-after", async () => {
    const store = await open();
    const k = key();
    const first = await store.take([take(k, gcra, 10)]);
    expect(first[0]).toMatchObject({ allowed: true, remaining: 0, retryAfterMs: 0 });
    const denied = await store.take([take(k, gcra)]);
    expect(denied[0]?.allowed).toBe(false);
    expect(denied[0]?.retryAfterMs).toBeGreaterThan(5_000);
    expect(denied[0]?.retryAfterMs).toBeLessThanOrEqual(6_000);
  });

  it("charges nothing anywhere when a GCRA and a fixed-window bucket of one call disagree", async () => {
    const store = await open();
    const [g, w] = [key(), key()];
    await store.take([take(w, window, 5)]);
    const out = await store.take([take(g, gcra, 3), take(w, window)]);
    expect(out.map((o) => o.allowed)).toEqual([true, false]);
    expect(out[0]?.remaining).toBe(10);
    const peek = await store.take([take(g, gcra, 0)]);
    expect(peek[0]?.remaining).toBe(10);
  });

  it("recovers from SCRIPT FLUSH by reloading the scripts (NOSCRIPT)", async () => {
    const store = await open();
    const k = key();
    await store.take([take(k, gcra)]);
    await admin.script("FLUSH");
    const out = await store.take([take(k, gcra)]);
    expect(out[0]).toMatchObject({ allowed: true, remaining: 8 });
  });

  it("keeps serving after redis-server restarts, without a new store", async () => {
    const store = await open();
    const k = key();
    await store.take([take(k, gcra)]);
    await server.restart();
    let out: Awaited<ReturnType<RedisStore["take"]>> | undefined;
    for (let i = 0; i < 100 && !out; i++) {
      out = await store.take([take(k, gcra)]).catch((err: unknown) => {
        expect(err).toBeInstanceOf(StoreError);
        expect((err as StoreError).transient).toBe(true);
        return new Promise<undefined>((r) => setTimeout(() => r(undefined), 20));
      });
    }
    // The restarted server is empty, so the bucket starts full again.
    expect(out?.[0]).toMatchObject({ allowed: true, remaining: 9 });
    admin = server.client();
  });

  it("admits exactly the capacity to hundreds of concurrent takes over several connections", async () => {
    const many = await Promise.all([open(), open(), open(), open()]);
    const k = key();
    const policy: Policy = { algorithm: "gcra", limit: 50, periodMs: 3_600_000, burst: 50 };
    const calls = Array.from({ length: 400 }, (_, i) => many[i % many.length]?.take([take(k, policy)]));
    const outs = await Promise.all(calls);
    expect(outs.filter((o) => o?.[0]?.allowed).length).toBe(50);
  });

  it("shares round trips between concurrent requests through auto-pipelining", async () => {
    const metrics = recordingMetrics();
    const store = await open({ metrics });
    const before = metrics.roundTrips;
    await Promise.all(Array.from({ length: 50 }, () => store.take([take(key(), gcra)])));
    expect(metrics.roundTrips - before).toBe(1);
    expect(metrics.seconds.filter((s) => s.operation === "take")).toHaveLength(50);
  });

  it("counts one round trip per command when auto-pipelining and merging are off", async () => {
    const metrics = recordingMetrics();
    const store = await open({ metrics, autoPipelining: false, batchMaxCalls: 1 });
    const before = metrics.roundTrips;
    await Promise.all(Array.from({ length: 5 }, () => store.take([take(key(), gcra)])));
    expect(metrics.roundTrips - before).toBe(5);
  });

  it("merges the take calls of one turn into script calls of at most batchMaxCalls, without auto-pipelining", async () => {
    const metrics = recordingMetrics();
    const store = await open({ metrics, autoPipelining: false, batchMaxCalls: 2 });
    const before = metrics.roundTrips;
    const k = key();
    // Five calls, four on one GCRA bucket of 10 (a token per 6 s, none regained meanwhile), one of
    // them with two takes: merged 2 + 2 + 1, run in order, each all-or-nothing on its own.
    const answers = await Promise.all([
      store.take([take(k, gcra, 4)]),
      store.take([take(k, gcra, 3), take(k, gcra, 2)]),
      store.take([take(k, gcra, 1)]),
      store.take([take(k, gcra, 1)]),
      store.take([take(`${k}:other`, gcra, 1)]),
    ]);
    expect(metrics.roundTrips - before).toBe(3);
    expect(answers.map((a) => a.map((o) => [o.allowed, o.remaining]))).toEqual([
      [[true, 6]],
      [
        [true, 3],
        [true, 1],
      ],
      [[true, 0]],
      [[false, 0]],
      [[true, 9]],
    ]);
  });

  it("fails only the decision whose bucket Redis cannot read, not the others merged with it", async () => {
    const store = await open();
    const bad = key();
    await server.client().hset(bad, "not", "a bucket"); // GET on it: WRONGTYPE inside the script
    const [before, broken, after] = await Promise.allSettled([
      store.take([take(key(), gcra)]),
      store.take([take(bad, gcra)]),
      store.take([take(key(), gcra)]),
    ]);
    expect(before).toMatchObject({ status: "fulfilled", value: [{ allowed: true, remaining: 9 }] });
    expect(after).toMatchObject({ status: "fulfilled", value: [{ allowed: true, remaining: 9 }] });
    expect(broken.status).toBe("rejected");
    expect(String((broken as PromiseRejectedResult).reason.message)).toMatch(/WRONGTYPE/);
    await server.client().del(bad);
  });

  it("gives the same answers to two stores whose local clocks disagree by hours", async () => {
    const [a, b] = await Promise.all([open(), open()]);
    const k = key();
    const real = Date.now();
    const skew = vi.spyOn(Date, "now");
    try {
      skew.mockReturnValue(real + 3_600_000);
      const fromA = await a.take([take(k, window, 2)]);
      skew.mockReturnValue(real - 3_600_000);
      const fromB = await b.take([take(k, window, 2)]);
      expect(fromA[0]?.remaining).toBe(3);
      expect(fromB[0]?.remaining).toBe(1);
      expect(Math.abs((fromA[0]?.resetAfterMs ?? 0) - (fromB[0]?.resetAfterMs ?? 0))).toBeLessThan(1_000);
    } finally {
      skew.mockRestore();
    }
  });

  it("deletes buckets on reset so they are full again", async () => {
    const store = await open();
    const k = key();
    await store.take([take(k, gcra, 10)]);
    await store.reset([k]);
    expect((await store.take([take(k, gcra, 0)]))[0]?.remaining).toBe(10);
  });

  it("fails fast with a transient connection error while Redis is down", async () => {
    const metrics = recordingMetrics();
    const store = await open({ metrics, maxReconnectDelayMs: 50 });
    await server.kill("SIGKILL");
    try {
      const err = await store.take([take(key(), gcra)]).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(StoreError);
      expect((err as StoreError).transient).toBe(true);
      expect(metrics.errors.length).toBe(1);
    } finally {
      await server.restart();
      admin = server.client();
    }
  });
});
