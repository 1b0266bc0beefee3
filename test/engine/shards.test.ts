import { describe, expect, it } from "vitest";
import { effectiveShards, otherShard, shardPolicies } from "../../src/engine/shards.js";
import type { Policy } from "../../src/engine/types.js";
import { desc, engineFor, query } from "./engine-fixture.js";

const gcra = (limit: number, burst = limit): Policy => ({
  algorithm: "gcra",
  limit,
  periodMs: 60_000,
  burst,
});

describe("shard policies", () => {
  it("keep the calendar of a calendar window, so every shard resets at the same boundary", () => {
    const calendar = { unit: "month", timeZone: "Europe/Berlin" } as const;
    const monthly: Policy = {
      algorithm: "fixed_window",
      limit: 1000,
      periodMs: 30 * 86_400_000,
      burst: 1000,
      calendar,
    };
    expect(shardPolicies(monthly, 4).map((p) => p.calendar)).toEqual([
      calendar,
      calendar,
      calendar,
      calendar,
    ]);
    expect(shardPolicies(monthly, 4).reduce((sum, p) => sum + p.limit, 0)).toBe(1000);
  });

  it("split rate and capacity exactly, the remainder going to the first shards", () => {
    const parts = shardPolicies(gcra(10, 7), 4);
    expect(parts.map((p) => p.limit)).toEqual([3, 3, 2, 2]);
    expect(parts.map((p) => p.burst)).toEqual([2, 2, 2, 1]);
    expect(parts.every((p) => p.periodMs === 60_000 && p.algorithm === "gcra")).toBe(true);
  });

  it("are capped so every shard of every limit holds at least one token", () => {
    expect(effectiveShards(8, [gcra(100), gcra(3)])).toBe(3);
    expect(effectiveShards(4, [gcra(100, 2)])).toBe(2);
    expect(effectiveShards(4, [gcra(100)])).toBe(4);
    expect(effectiveShards(1, [gcra(100)])).toBe(1);
  });

  it("pick another shard than the current one on retry", () => {
    for (const r of [0, 0.2, 0.5, 0.99])
      for (let current = 0; current < 4; current++) {
        const next = otherShard(current, 4, () => r);
        expect(next).not.toBe(current);
        expect(next).toBeGreaterThanOrEqual(0);
        expect(next).toBeLessThan(4);
      }
  });
});

describe("sharded descriptors", () => {
  const RULES = `
domain: hot
descriptors:
  - key: tenant
    shards: 4
    rate_limits:
      - { unit: minute, requests_per_unit: 8 }
      - { unit: hour, requests_per_unit: 100 }
  - key: tiny
    shards: 4
    rate_limit: { unit: minute, requests_per_unit: 2 }
`;

  it("put all limits of a descriptor on one shard, so they share one hash tag", async () => {
    const { engine, calls } = engineFor(RULES, { random: () => 0.6 });
    await engine.shouldRateLimit(query("hot", [desc("tenant=big")]));
    expect(calls[0]?.map((t) => t.key)).toEqual([
      "tl:v1:{hot|tenant=big#2}:g0",
      "tl:v1:{hot|tenant=big#2}:g1",
    ]);
    expect(calls[0]?.map((t) => t.policy.burst)).toEqual([2, 25]);
  });

  it("try one other shard before denying", async () => {
    const { engine, calls } = engineFor(RULES, { random: () => 0 });
    await engine.shouldRateLimit(query("hot", [desc("tenant=big")], 2)); // shard 0 now empty
    calls.length = 0;
    const r = await engine.shouldRateLimit(query("hot", [desc("tenant=big")], 2));
    expect(r.overallCode).toBe("OK");
    expect(calls.map((c) => c[0]?.key)).toEqual([
      "tl:v1:{hot|tenant=big#0}:g0",
      "tl:v1:{hot|tenant=big#1}:g0",
    ]);
  });

  it("never admit more than the unsharded limit, even when the limit is below the shard count", async () => {
    let n = 0;
    const { engine } = engineFor(RULES, { random: () => (n++ * 0.37) % 1 });
    let big = 0;
    let tiny = 0;
    for (let i = 0; i < 20; i++) {
      const r = await engine.shouldRateLimit(query("hot", [desc("tenant=big")]));
      if (r.overallCode === "OK") big++;
      const t = await engine.shouldRateLimit(query("hot", [desc("tiny=t")]));
      if (t.overallCode === "OK") tiny++;
    }
    expect(big).toBeLessThanOrEqual(8);
    expect(big).toBeGreaterThanOrEqual(6); // bound: denied only when both tried shards are empty
    expect(tiny).toBe(2);
  });
});

describe("shard retry", () => {
  const RULES = `
domain: hot
descriptors:
  - key: tenant
    shards: 2
    rate_limit: { unit: minute, requests_per_unit: 2 }
  - key: ip
    rate_limit: { unit: minute, requests_per_unit: 1 }
`;

  it("is skipped when an unsharded descriptor denies the request anyway", async () => {
    const { engine, calls } = engineFor(RULES, { random: () => 0 });
    await engine.shouldRateLimit(query("hot", [desc("tenant=t"), desc("ip=1")])); // shard 0 and ip spent
    calls.length = 0;
    const r = await engine.shouldRateLimit(query("hot", [desc("tenant=t"), desc("ip=1")]));
    expect(r.overallCode).toBe("OVER_LIMIT");
    expect(calls).toHaveLength(1);
  });
});
