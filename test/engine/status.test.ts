import { describe, expect, it } from "vitest";
import type { LimitedPlan } from "../../src/engine/plan.js";
import { bindingLimit, describe as describeStatus, UNLIMITED_REMAINING } from "../../src/engine/status.js";
import type { Outcome } from "../../src/store/store.js";

const ok = (remaining: number, resetAfterMs: number): Outcome => ({
  allowed: true,
  remaining,
  retryAfterMs: 0,
  resetAfterMs,
});
const over = (retryAfterMs: number): Outcome => ({
  allowed: false,
  remaining: 0,
  retryAfterMs,
  resetAfterMs: 9_000,
});

const policy = { algorithm: "gcra" as const, limit: 10, periodMs: 1000, burst: 10 };
const limit = (name: string) => ({
  reported: { requestsPerUnit: 10, unit: "second" as const, name },
  policies: [policy],
  tails: ["}:g0"],
});
const plan = (extra: Partial<LimitedPlan> = {}): LimitedPlan => ({
  kind: "limited",
  rule: undefined,
  limits: [limit("a"), limit("b"), limit("c")],
  keyBase: "tl:v1:{d|k=v",
  keys: undefined,
  shards: 1,
  blocked: -1,
  cost: 1,
  shadow: false,
  quota: false,
  onStoreError: undefined,
  lease: undefined,
  entries: [],
  ...extra,
});

describe("binding limit", () => {
  it("is the denied limit with the longest wait, a never-passing one above all", () => {
    expect(bindingLimit([ok(1, 0), over(500), over(2000)])).toBe(2);
    expect(bindingLimit([over(-1), over(500), ok(0, 0)])).toBe(0);
  });

  it("is the limit with the fewest tokens left when none is denied", () => {
    expect(bindingLimit([ok(5, 0), ok(2, 0), ok(3, 0)])).toBe(1);
  });
});

describe("descriptor status", () => {
  it("rounds the time until full up to whole seconds when OK", () => {
    const d = describeStatus(plan(), [ok(9, 1001), ok(9, 100), ok(9, 100)]);
    expect(d.status).toEqual({
      code: "OK",
      currentLimit: { requestsPerUnit: 10, unit: "second", name: "a" },
      limitRemaining: 9,
      durationUntilResetSec: 2,
    });
    expect(d.result).toBe("ok");
  });

  it("reports at least one second until admission when over, and 0 tokens left", () => {
    const d = describeStatus(plan(), [ok(3, 0), over(20), ok(3, 0)]);
    expect(d.status).toMatchObject({ code: "OVER_LIMIT", limitRemaining: 0, durationUntilResetSec: 1 });
    expect(d.status.currentLimit?.name).toBe("b");
    expect(d.header).toMatchObject({ over: true, resetSec: 1 });
  });

  it("gives no retry time to a cost that can never pass", () => {
    const d = describeStatus(plan(), [over(-1), ok(3, 0), ok(3, 0)]);
    expect(d.status.durationUntilResetSec).toBeUndefined();
  });

  it("reports a shadow-mode denial as OK with the shadow result", () => {
    const d = describeStatus(plan({ shadow: true }), [over(1000), ok(1, 0), ok(1, 0)]);
    expect(d.status.code).toBe("OK");
    expect(d.result).toBe("shadow_over_limit");
  });

  it("answers a blocked limit OVER_LIMIT with its requests_per_unit 0 limit", () => {
    const blocked = limit("zero");
    const d = describeStatus(
      plan({
        limits: [limit("a"), { ...blocked, reported: { ...blocked.reported, requestsPerUnit: 0 } }],
        blocked: 1,
      }),
      [],
    );
    expect(d.status).toEqual({
      code: "OVER_LIMIT",
      currentLimit: { requestsPerUnit: 0, unit: "second", name: "zero" },
      limitRemaining: 0,
      durationUntilResetSec: undefined,
    });
  });

  it("answers unlimited with the largest uint32 left and no limit", () => {
    const rule = { path: "d.k" } as unknown as NonNullable<LimitedPlan["rule"]>;
    const d = describeStatus({ kind: "unlimited", rule }, []);
    expect(d.status).toMatchObject({
      code: "OK",
      currentLimit: undefined,
      limitRemaining: UNLIMITED_REMAINING,
    });
    expect(UNLIMITED_REMAINING).toBe(2 ** 32 - 1);
    expect(d.header).toBeUndefined();
  });
});
