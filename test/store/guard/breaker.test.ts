import { describe, expect, it } from "vitest";
import {
  type BreakerSettings,
  CircuitBreaker,
  DEFAULT_BREAKER,
  type Transition,
} from "../../../src/store/guard/breaker.js";
import { FakeClock } from "../../helpers/fake-clock.js";

const boom = { code: "connection", message: "ECONNREFUSED" };
const settings: Partial<BreakerSettings> = {
  consecutiveFailures: 3,
  failureRatio: 0.5,
  windowMs: 10_000,
  minRequests: 10,
  halfOpenProbes: 2,
  baseMs: 1_000,
  maxMs: 30_000,
  jitter: 0,
};

function setup(extra: Partial<BreakerSettings> = {}) {
  const time = new FakeClock();
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
    await time.tick(20_000);
    fail(2);
    succeed(1);
    expect(breaker.snapshot().state).toBe("closed");
  });

  it("lets nothing through while open, then half-opens with a bounded number of probes", async () => {
    const { breaker, fail, time } = setup();
    fail(3);
    expect(breaker.acquire()).toBeUndefined();
    expect(breaker.remainingOpenMs()).toBe(1_000);
    await time.tick(999);
    expect(breaker.acquire()).toBeUndefined();
    await time.tick(1);
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
    await time.tick(1_000);
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
    await time.tick(1_000);
    fail(1);
    expect(breaker.snapshot().state).toBe("open");
    expect(transitions.at(-1)).toMatchObject({ to: "open", reason: "probe_failed", openMs: 2_000 });
    await time.tick(2_000);
    fail(1);
    expect(transitions.at(-1)?.openMs).toBe(4_000);
    await time.tick(4_000);
    const probe = breaker.acquire();
    if (probe) breaker.success(probe);
    fail(3);
    expect(transitions.at(-1)?.openMs).toBe(1_000);
  });

  it("ignores answers of calls let through before the last transition", async () => {
    const { breaker, fail, time } = setup();
    const stale = breaker.acquire();
    fail(3);
    await time.tick(1_000);
    if (stale) breaker.success(stale);
    expect(breaker.snapshot().state).toBe("open");
  });

  it("keeps the last error with its time for status pages", async () => {
    const { breaker, fail, time } = setup();
    fail(1);
    expect(breaker.snapshot().lastError).toEqual({ ...boom, at: time.now() });
  });

  it("with the default backoff, never stays open longer than 1 s however many probes fail", async () => {
    // Default base, multiplier, cap and jitter; the highest jitter draw each time.
    const { breaker, fail, time, transitions } = setup({
      baseMs: DEFAULT_BREAKER.baseMs,
      multiplier: DEFAULT_BREAKER.multiplier,
      maxMs: DEFAULT_BREAKER.maxMs,
      jitter: DEFAULT_BREAKER.jitter,
    });
    fail(3);
    for (let probe = 0; probe < 8; probe++) {
      await time.tick(breaker.remainingOpenMs());
      fail(1);
    }
    const opens = transitions.filter((t) => t.to === "open").map((t) => t.openMs);
    // 250, 500, 1000 (capped) … with random() = 0.5 (no jitter); the cap holds jitter included.
    expect(opens).toEqual([250, 500, 1_000, 1_000, 1_000, 1_000, 1_000, 1_000, 1_000]);
    expect(DEFAULT_BREAKER.maxMs).toBe(1_000);
  });

  it("caps the open time jitter included, even at the highest draw", async () => {
    const time = new FakeClock();
    const opens: number[] = [];
    const breaker = new CircuitBreaker({
      clock: time,
      settings: { consecutiveFailures: 1 },
      random: () => 0.999_999,
      onTransition: (t) => {
        if (t.openMs !== undefined) opens.push(t.openMs);
      },
    });
    const fail = () => {
      const p = breaker.acquire();
      if (p) breaker.failure(p, boom);
    };
    fail();
    for (let i = 0; i < 5; i++) {
      await time.tick(breaker.remainingOpenMs());
      fail();
    }
    expect(opens[0]).toBeCloseTo(300, 0);
    expect(opens[1]).toBeCloseTo(600, 0);
    expect(opens.slice(2)).toEqual([1_000, 1_000, 1_000, 1_000]);
  });

  it("half-opens at once when the store reports it is ready, and the probe decides", async () => {
    const { breaker, fail, time, transitions } = setup();
    fail(3);
    await time.tick(10);
    breaker.storeReady();
    expect(breaker.snapshot().state).toBe("half_open");
    expect(transitions.at(-1)).toMatchObject({ from: "open", to: "half_open", reason: "store_ready" });
    // A failed probe reopens with the next, longer, time (the reconnect did not reset the backoff).
    fail(1);
    expect(transitions.at(-1)).toMatchObject({ to: "open", reason: "probe_failed", openMs: 2_000 });
    breaker.storeReady();
    const probe = breaker.acquire();
    if (!probe?.probe) throw new Error("expected a probe");
    breaker.success(probe);
    expect(breaker.snapshot().state).toBe("closed");
  });

  it("never caps the open time below the first one", () => {
    const { breaker, fail, transitions } = setup({ baseMs: 5_000, maxMs: 1_000 });
    expect(breaker.settings.maxMs).toBe(5_000);
    fail(3);
    expect(transitions.at(-1)?.openMs).toBe(5_000);
  });

  it("ignores a ready store unless open", () => {
    const { breaker, fail, transitions } = setup();
    breaker.storeReady();
    expect(transitions).toEqual([]);
    fail(3);
    breaker.storeReady();
    expect(breaker.snapshot().state).toBe("half_open");
    breaker.storeReady();
    expect(transitions.map((t) => t.to)).toEqual(["open", "half_open"]);
  });
});
