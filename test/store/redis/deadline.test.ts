import { describe, expect, it } from "vitest";
import type { Policy } from "../../../src/engine/types.js";
import { CallTimeoutError, withDeadline } from "../../../src/store/redis/deadline.js";
import { classifyRedisError } from "../../../src/store/redis/errors.js";
import { RedisStore } from "../../../src/store/redis/redis-store.js";
import { FakeClock } from "../../helpers/fake-clock.js";
import { startFakeResp } from "../../helpers/fake-resp.js";

describe("withDeadline", () => {
  it("rejects a call that never settles once its deadline passes", async () => {
    const clock = new FakeClock();
    const pending = withDeadline(new Promise<never>(() => {}), 400, clock);
    let settled = false;
    const outcome = pending
      .catch((e: unknown) => e)
      .finally(() => {
        settled = true;
      });
    await clock.tick(399);
    expect(settled).toBe(false);
    await clock.tick(1);
    const err = await outcome;
    expect(err).toBeInstanceOf(CallTimeoutError);
    expect(classifyRedisError(err, "take")).toMatchObject({ code: "timeout", transient: true });
    expect(clock.pendingTimers).toBe(0);
  });

  it("passes a result through and leaves no timer behind", async () => {
    const clock = new FakeClock();
    const raced = withDeadline(Promise.resolve(7), 400, clock);
    expect(clock.pendingTimers).toBe(1);
    await expect(raced).resolves.toBe(7);
    expect(clock.pendingTimers).toBe(0);
  });

  it("passes a rejection through and clears its timer", async () => {
    const clock = new FakeClock();
    await expect(withDeadline(Promise.reject(new Error("NOSCRIPT")), 400, clock)).rejects.toThrow("NOSCRIPT");
    expect(clock.pendingTimers).toBe(0);
  });
});

describe("RedisStore's call deadline", () => {
  it("runs on the injected timers: a script call to a peer that never answers fails when they say", async () => {
    const fake = await startFakeResp({ kind: "ping" });
    const clock = new FakeClock();
    const store = new RedisStore({
      url: fake.url,
      timers: clock,
      callTimeoutMs: 60_000,
      commandTimeoutMs: 120_000,
    });
    try {
      await store.ready();
      const policy: Policy = { algorithm: "gcra", limit: 10, periodMs: 60_000, burst: 10 };
      let settled = false;
      const outcome = store
        .take([{ key: "tl:v1:{d|k=v}:g0", policy, cost: 1 }])
        .catch((e: unknown) => e)
        .finally(() => {
          settled = true;
        });
      const deadline = Date.now() + 5_000;
      while (!fake.commands.includes("EVALSHA")) {
        if (Date.now() > deadline) throw new Error("the script call never reached the peer");
        await new Promise((r) => setTimeout(r, 10));
      }
      await clock.tick(59_999);
      expect(settled).toBe(false);
      await clock.tick(1);
      expect(classifyRedisError(await outcome, "take")).toMatchObject({ code: "timeout", transient: true });
    } finally {
      // The peer goes first: a QUIT to a peer that never answers would wait for it.
      await fake.close();
      await store.close();
    }
  }, 10_000);
});
