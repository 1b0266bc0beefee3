import { describe, expect, it } from "vitest";
import { type BreakerSettings, CircuitBreaker, type Transition } from "../../../src/store/guard/breaker.js";
import { FakeTime } from "./fake-time.js";

const boom = { code: "connection", message: "ECONNREFUSED" };
const settings: Partial<BreakerSettings> = {
  consecutiveFailures: 3,
  failureRatio: 0.5,
  windowMs: 10_000,
  minRequests: 10,
  halfOpenProbes: 2,
  baseMs: 1_000,
  jitter: 0,
};

function setup(extra: Partial<BreakerSettings> = {}) {
  const time = new FakeTime();
  const transitions: Transition[] = [];
  const breaker = new CircuitBreaker({
    clock: time,
    settings: { ...settings, ...extra },
    random: () => 0.5,
    onTransition: (t) => transitions.push(t),
  });
  const fail = (n: number) => {
    for (let i = 0; i < n; i++) {
      const p = breaker.acquire();
      if (p) breaker.failure(p, boom);
    }
  };
  const succeed = (n: number) => {
    for (let i = 0; i < n; i++) {
      const p = breaker.acquire();
      if (p) breaker.success(p);
    }
  };
  return { time, transitions, breaker, fail, succeed };
}

describe("CircuitBreaker", () => {
  it("opens after the configured number of consecutive failures, not before", () => {
    const { breaker, fail, transitions } = setup();
    fail(2);
    expect(breaker.snapshot().state).toBe("closed");
    fail(1);
    expect(breaker.snapshot().state).toBe("open");
    expect(transitions.map((t) => [t.to, t.reason])).toEqual([["open", "consecutive_failures"]]);
  });

  it("resets the consecutive count on a success", () => {
    const { breaker, fail, succeed } = setup();
    fail(2);
    succeed(1);
    fail(2);
    expect(breaker.snapshot().state).toBe("closed");
  });

  it("opens on the failure ratio once the window holds the minimum number of calls", () => {
    const { breaker, fail, succeed, transitions } = setup();
    for (let i = 0; i < 4; i++) {
      fail(1);
      succeed(1);
    }
    expect(breaker.snapshot().state).toBe("closed");
    fail(1);
    succeed(1);
    expect(breaker.snapshot().state).toBe("closed");
    fail(1);
    expect(breaker.snapshot().state).toBe("open");
    expect(transitions[0]?.reason).toBe("failure_ratio");
  });

  it("does not count calls that left the ratio window", async () => {
    const { breaker, fail, succeed, time } = setup();
    for (let i = 0; i < 4; i++) {
      fail(1);
      succeed(1);
    }
    await time.advance(20_000);
    fail(2);
    succeed(1);
    expect(breaker.snapshot().state).toBe("closed");
  });

  it("lets nothing through while open, then half-opens with a bounded number of probes", async () => {
    const { breaker, fail, time } = setup();
    fail(3);
    expect(breaker.acquire()).toBeUndefined();
    expect(breaker.remainingOpenMs()).toBe(1_000);
    await time.advance(999);
    expect(breaker.acquire()).toBeUndefined();
    await time.advance(1);
    const first = breaker.acquire();
    const second = breaker.acquire();
    expect(first?.probe).toBe(true);
    expect(second?.probe).toBe(true);
    expect(breaker.acquire()).toBeUndefined();
    expect(breaker.snapshot().state).toBe("half_open");
  });

  it("closes on a successful probe and lets every call through again", async () => {
    const { breaker, fail, time, transitions } = setup();
    fail(3);
    await time.advance(1_000);
    const probe = breaker.acquire();
    if (!probe) throw new Error("expected a probe");
    breaker.success(probe);
    expect(breaker.snapshot().state).toBe("closed");
    expect(breaker.acquire()?.probe).toBe(false);
    expect(transitions.map((t) => t.to)).toEqual(["open", "half_open", "closed"]);
  });

  it("reopens on a failed probe for twice as long, and starts over at the base time after closing", async () => {
    const { breaker, fail, time, transitions } = setup();
    fail(3);
    await time.advance(1_000);
    fail(1);
    expect(breaker.snapshot().state).toBe("open");
    expect(transitions.at(-1)).toMatchObject({ to: "open", reason: "probe_failed", openMs: 2_000 });
    await time.advance(2_000);
    fail(1);
    expect(transitions.at(-1)?.openMs).toBe(4_000);
    await time.advance(4_000);
    const probe = breaker.acquire();
    if (probe) breaker.success(probe);
    fail(3);
    expect(transitions.at(-1)?.openMs).toBe(1_000);
  });

  it("ignores answers of calls let through before the last transition", async () => {
    const { breaker, fail, time } = setup();
    const stale = breaker.acquire();
    fail(3);
    await time.advance(1_000);
    if (stale) breaker.success(stale);
    expect(breaker.snapshot().state).toBe("open");
  });

  it("keeps the last error with its time for status pages", async () => {
    const { breaker, fail, time } = setup();
    fail(1);
    expect(breaker.snapshot().lastError).toEqual({ ...boom, at: time.now() });
  });
});
