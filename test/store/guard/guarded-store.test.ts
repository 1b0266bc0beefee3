import { describe, expect, it } from "vitest";
import type { FailurePolicy, Policy } from "../../../src/engine/types.js";
import type { BreakerState } from "../../../src/store/guard/breaker.js";
import { GuardedStore, type GuardedStoreOptions } from "../../../src/store/guard/guarded-store.js";
import { MemoryStore } from "../../../src/store/memory/memory-store.js";
import { StoreError, type Take } from "../../../src/store/store.js";
import { FakeClock, flush } from "../../helpers/fake-clock.js";
import { ControllableStore } from "./controllable-store.js";

const policy: Policy = Object.freeze({ algorithm: "gcra", limit: 10, periodMs: 60_000, burst: 10 });

function take(onStoreError?: FailurePolicy, key = "k"): Take {
  return onStoreError === undefined ? { key, policy, cost: 1 } : { key, policy, cost: 1, onStoreError };
}

function setup(opts: Partial<GuardedStoreOptions> = {}) {
  const time = new FakeClock();
  const inner = new ControllableStore();
  const logs: { level: string; obj: object; msg: string }[] = [];
  const states: BreakerState[] = [];
  const degraded: boolean[] = [];
  const errors: string[] = [];
  const guard = new GuardedStore({
    inner,
    fallback: new MemoryStore({ clock: time }),
    clock: time,
    timers: time,
    random: () => 0.5,
    deadlineMs: 10,
    breaker: { consecutiveFailures: 3, baseMs: 1_000, jitter: 0, halfOpenProbes: 1 },
    logger: {
      info: (obj, msg) => logs.push({ level: "info", obj, msg }),
      warn: (obj, msg) => logs.push({ level: "warn", obj, msg }),
    },
    events: {
      breakerState: (s) => states.push(s),
      degraded: (d) => degraded.push(d),
      storeError: (k) => errors.push(k),
    },
    ...opts,
  });
  /** Take once while the inner store hangs, and let the deadline pass. */
  const timeout = async (t: Take = take()) => {
    inner.mode = "manual";
    const p = guard.take([t]);
    await time.tick(10);
    return p;
  };
  const open = async () => {
    for (let i = 0; i < 3; i++) await timeout();
  };
  return { time, inner, guard, logs, states, degraded, errors, timeout, open };
}

describe("GuardedStore", () => {
  it("names itself after the store it guards and passes answers through when healthy", async () => {
    const { guard } = setup();
    expect(guard.kind).toBe("guard(fake)");
    expect(await guard.take([take()])).toEqual([
      { allowed: true, remaining: 42, retryAfterMs: 0, resetAfterMs: 0 },
    ]);
    expect(guard.status()).toMatchObject({ state: "closed", degraded: false, lateAnswers: 0 });
  });

  it("answers by policy once the deadline passes without an answer", async () => {
    const { guard, time, inner, errors } = setup();
    inner.mode = "manual";
    let settled = false;
    const answer = guard.take([take()]).then((o) => {
      settled = true;
      return o;
    });
    await time.tick(9);
    expect(settled).toBe(false);
    await time.tick(1);
    expect((await answer)[0]).toMatchObject({ allowed: true, remaining: 9 });
    expect(errors).toEqual(["timeout"]);
  });

  it("drops an answer that arrives after the deadline and counts it as late", async () => {
    const { guard, inner, timeout } = setup();
    const answer = await timeout();
    inner.calls[0]?.resolve([{ allowed: false, remaining: 0, retryAfterMs: 5, resetAfterMs: 5 }]);
    await flush();
    expect(answer[0]?.remaining).toBe(9);
    expect(guard.status().lateAnswers).toBe(1);
  });

  it("stops calling the inner store once the breaker is open, so nobody waits", async () => {
    const { guard, inner, open, errors } = setup();
    await open();
    expect(inner.calls).toHaveLength(3);
    const answer = await guard.take([take()]);
    expect(answer[0]?.allowed).toBe(true);
    expect(inner.calls).toHaveLength(3);
    expect(errors.at(-1)).toBe("circuit_open");
    expect(guard.status()).toMatchObject({ state: "open", degraded: true, lastError: { code: "timeout" } });
  });

  it("half-opens after the open time, probes once, and closes when the probe succeeds", async () => {
    const { guard, inner, open, time } = setup();
    await open();
    await time.tick(1_000);
    inner.mode = "manual";
    const probe = guard.take([take()]);
    expect(guard.state).toBe("half_open");
    expect((await guard.take([take()]))[0]?.remaining).toBeLessThan(42);
    expect(inner.calls).toHaveLength(4);
    inner.calls[3]?.resolve();
    expect((await probe)[0]?.remaining).toBe(42);
    expect(guard.state).toBe("closed");
  });

  it("logs the outage once when it starts and once when it ends, and reports every state change", async () => {
    const { guard, inner, open, time, logs, states, degraded } = setup();
    await open();
    for (let i = 0; i < 5; i++) await guard.take([take()]);
    await time.tick(1_000);
    inner.mode = "ok";
    await guard.take([take()]);
    expect(logs.map((l) => [l.level, (l.obj as { breaker: string }).breaker])).toEqual([
      ["warn", "open"],
      ["info", "closed"],
    ]);
    expect(logs[0]?.obj).toMatchObject({
      reason: "consecutive_failures",
      openMs: 1_000,
      lastError: { code: "timeout" },
    });
    expect(logs[1]?.obj).toMatchObject({ outageMs: 1_000, failedProbes: 0, firstError: { code: "timeout" } });
    expect(states).toEqual(["open", "half_open", "closed"]);
    expect(degraded).toEqual([true, false]);
  });

  it("answers by policy with the policy named on each outcome: local fallback answers are marked local", async () => {
    const { guard, open } = setup();
    await open();
    expect(await guard.take([take()])).toEqual([
      // The three timed-out takes that opened the breaker were answered by the fallback too: 10 - 4.
      { allowed: true, remaining: 6, retryAfterMs: 0, resetAfterMs: expect.any(Number), policy: "local" },
    ]);
  });

  it("allow policy admits every take with remaining counted from the limit", async () => {
    const { guard, open } = setup({ defaultPolicy: "allow" });
    await open();
    const cost3: Take = { key: "k", policy, cost: 3 };
    expect(await guard.take([cost3])).toEqual([
      { allowed: true, remaining: 7, retryAfterMs: 0, resetAfterMs: 0, policy: "allow" },
    ]);
  });

  it("deny policy refuses with the breaker's remaining open time as retry-after", async () => {
    const { guard, open, time } = setup({ breaker: { consecutiveFailures: 3, baseMs: 5_000, jitter: 0 } });
    await open();
    await time.tick(1_500);
    expect(await guard.take([take("deny")])).toEqual([
      { allowed: false, remaining: 0, retryAfterMs: 3_500, resetAfterMs: 3_500, policy: "deny" },
    ]);
  });

  it("deny policy never asks for less than one second", async () => {
    const { guard, open, time, timeout } = setup();
    expect((await timeout(take("deny")))[0]?.retryAfterMs).toBe(1_000);
    await open();
    await time.tick(900);
    expect((await guard.take([take("deny")]))[0]?.retryAfterMs).toBe(1_000);
  });

  it("error policy throws a transient unavailable StoreError carrying the cause", async () => {
    const { guard, inner, time } = setup({ defaultPolicy: "error" });
    inner.mode = "fail";
    const err = await guard.take([take()]).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StoreError);
    expect(err).toMatchObject({ code: "unavailable", transient: true });
    expect((err as StoreError).cause).toMatchObject({ code: "connection" });
    expect(time.pendingTimers).toBe(0);
  });

  it("follows the most decisive policy of a mixed batch", async () => {
    const { guard, open } = setup();
    await open();
    expect((await guard.take([take("allow", "a"), take("deny", "b")]))[0]?.allowed).toBe(false);
    await expect(guard.take([take("deny", "a"), take("error", "b")])).rejects.toMatchObject({
      code: "unavailable",
    });
    expect((await guard.take([take("allow", "a"), take("allow", "b")]))[0]?.remaining).toBe(9);
  });

  it("local policy divides limit and burst by the live instance count", async () => {
    const { guard, open } = setup({ instances: { count: () => 4 } });
    await open();
    const answers = [];
    for (let i = 0; i < 4; i++) answers.push((await guard.take([take(undefined, "fresh")]))[0]?.allowed);
    expect(answers).toEqual([true, true, false, false]);
    expect(guard.status().instances).toBe(4);
  });

  it("local policy keeps at least one request per bucket however many instances run", async () => {
    const { guard, open } = setup({ instances: { count: () => 1_000 } });
    await open();
    expect((await guard.take([take(undefined, "fresh")]))[0]?.allowed).toBe(true);
    expect((await guard.take([take(undefined, "fresh")]))[0]?.allowed).toBe(false);
  });

  it("turns an unclassified throw into a failure answered by policy", async () => {
    const { guard, inner, errors } = setup({ defaultPolicy: "allow" });
    inner.take = () => {
      throw new TypeError("bug");
    };
    expect((await guard.take([take()]))[0]?.allowed).toBe(true);
    expect(errors).toEqual(["internal"]);
  });

  it("resets both the inner store and the fallback", async () => {
    const { guard, inner, open } = setup({ instances: { count: () => 10 } });
    await open();
    await guard.take([take()]);
    expect((await guard.take([take()]))[0]?.allowed).toBe(false);
    inner.mode = "ok";
    await guard.reset(["k"]);
    expect(inner.resets).toBe(1);
    expect((await guard.take([take()]))[0]?.allowed).toBe(true);
  });

  it("forwards refunds while closed and refuses them at once while open", async () => {
    const { guard, inner, open } = setup();
    await guard.refund([take()]);
    expect(inner.refunds).toHaveLength(1);
    await open();
    await expect(guard.refund([take()])).rejects.toMatchObject({ code: "unavailable" });
    expect(inner.refunds).toHaveLength(1);
  });
});
