/** The guard's `local` fallback keeps overdraft buckets and refunds: same math, divided per instance. */
import { describe, expect, it } from "vitest";
import type { Policy } from "../../../src/engine/types.js";
import { dividePolicy, LocalFallback } from "../../../src/store/guard/fallback.js";
import { MemoryStore } from "../../../src/store/memory/memory-store.js";
import { FakeClock } from "../../helpers/fake-clock.js";

const overdraft: Policy = { algorithm: "gcra", limit: 100, periodMs: 60_000, burst: 100, maxDebt: 1000 };

describe("local fallback", () => {
  it("divides an overdraft bucket's debt bound with its limit and burst", () => {
    expect(dividePolicy(overdraft, 4)).toEqual({
      algorithm: "gcra",
      limit: 25,
      periodMs: 60_000,
      burst: 25,
      maxDebt: 250,
    });
    expect(dividePolicy(overdraft, 1)).toBe(overdraft);
    const ordinary: Policy = { algorithm: "gcra", limit: 100, periodMs: 60_000, burst: 100 };
    expect(Object.keys(dividePolicy(ordinary, 4))).not.toContain("maxDebt");
  });

  it("applies an overdraft charge into debt and a refund, answering as the local policy", async () => {
    const clock = new FakeClock();
    const fallback = new LocalFallback({ store: new MemoryStore({ clock }), instances: { count: () => 2 } });
    const take = async (cost: number) => (await fallback.take([{ key: "k", policy: overdraft, cost }]))[0];
    // 50 tokens per instance, at most 500 of debt.
    expect(await take(40)).toMatchObject({ allowed: true, remaining: 10, policy: "local" });
    expect(await take(200)).toMatchObject({ allowed: true, remaining: 0 });
    expect(await take(0)).toMatchObject({ allowed: false, policy: "local" });
    expect(await take(-195)).toMatchObject({ allowed: true, remaining: 5 });
    expect(await take(0)).toMatchObject({ allowed: true, remaining: 5 });
  });
});
