/** The fair allocator and the token bucket rounding: examples and seeded property tests. */
import { describe, expect, it } from "vitest";
import { nextRate, type Participant, targetShares, unsettled } from "../../../src/engine/rlqs/allocator.js";
import {
  fillIntervalSec,
  RESOLUTION,
  rateOf,
  tokenBucketFor,
} from "../../../src/engine/rlqs/token-bucket.js";
import { Prng } from "../../fuzz/prng.js";

const sum = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0);

describe("targetShares", () => {
  it("splits by demand above a floor, summing to the limit", () => {
    const shares = targetShares(100, 0.1, [70, 20, 10]);
    // floor = 10% of 100/3; pool 90 by demand.
    expect(shares.map((s) => Math.round(s * 1000) / 1000)).toEqual([66.333, 21.333, 12.333]);
    expect(sum(shares)).toBeCloseTo(100, 9);
  });
  it("gives a quiet Envoy the floor and splits equally without demand", () => {
    expect(targetShares(90, 0.3, [50, 0, 0]).map((s) => Math.round(s))).toEqual([72, 9, 9]);
    expect(targetShares(90, 0.1, [0, 0, 0])).toEqual([30, 30, 30]);
    expect(targetShares(90, 0.1, [])).toEqual([]);
  });
  it("ignores negative and non-finite demand", () => {
    expect(targetShares(10, 0, [Number.NaN, -5, 10])).toEqual([0, 0, 10]);
  });
});

describe("nextRate", () => {
  const params = { limit: 100, minShare: 0.1, threshold: 0.1 };
  it("caps an increase at the room the others leave", () => {
    const all: Participant[] = [
      { id: "a", demand: 10, held: 70 },
      { id: "b", demand: 90, held: 20 },
    ];
    // b's target is 5 + 90*0.9 = 86, but a still holds 70: b gets 30 now.
    expect(nextRate(params, all, "b", 20)).toBe(30);
    // a shrinks to its target at once.
    expect(nextRate(params, all, "a", 70)).toBeCloseTo(5 + 9, 9);
  });
  it("keeps a held rate through small moves (hysteresis) and re-sends material ones", () => {
    const all: Participant[] = [
      { id: "a", demand: 52, held: 50 },
      { id: "b", demand: 48, held: 50 },
    ];
    expect(nextRate(params, all, "a", 50)).toBe(50);
    const moved: Participant[] = [
      { id: "a", demand: 80, held: 50 },
      { id: "b", demand: 20, held: 20 },
    ];
    expect(nextRate(params, moved, "a", 50)).toBeCloseTo(5 + 72, 9);
  });
  it("gives back a held excess within the threshold while another participant is short", () => {
    // a's target is 5 + 45 = 50; it holds 54 (within 10 %): kept while nobody waits for room.
    const calm: Participant[] = [
      { id: "a", demand: 50, held: 54 },
      { id: "b", demand: 50, held: 46 },
    ];
    expect(nextRate(params, calm, "a", 54)).toBe(54);
    // c is new and holds nothing: a drops to its target at once (the room c waits for).
    const waiting: Participant[] = [
      { id: "a", demand: 50, held: 54 },
      { id: "b", demand: 25, held: 46 },
      { id: "c", demand: 25, held: 0 },
    ];
    const target = targetShares(100, 0.1, [50, 25, 25])[0] as number;
    expect(nextRate(params, waiting, "a", 54)).toBeCloseTo(target, 9);
  });
  it("keeps an excess within the threshold that would not be a material raise for the short one", () => {
    // Targets 86 and 14. b holds 12.5: short (by 1.5, more than 10 % of 12.5).
    const view = (aHeld: number): Participant[] => [
      { id: "a", demand: 90, held: aHeld },
      { id: "b", demand: 10, held: 12.5 },
    ];
    // a's excess of 1 is less than 10 % of what b holds: re-sending it would restart a's bucket
    // (a burst) for a raise b would not get re-sent. Kept.
    expect(nextRate(params, view(87), "a", 87)).toBe(87);
    // An excess of 2 is a material raise for b: given back.
    expect(nextRate(params, view(88), "a", 88)).toBeCloseTo(86, 9);
  });
  it("calls a view unsettled while somebody is short of its target beyond the threshold", () => {
    expect(
      unsettled(params, [
        { id: "a", demand: 50, held: 54 },
        { id: "b", demand: 50, held: 46 },
      ]),
    ).toBe(false);
    // b's target is 86, it holds 30 (capped by a's 70): unsettled until a gives the room back.
    expect(
      unsettled(params, [
        { id: "a", demand: 10, held: 70 },
        { id: "b", demand: 90, held: 30 },
      ]),
    ).toBe(true);
    // A shortfall of rounding size (under 1/1000 of the limit) is settled, even with no threshold.
    expect(
      unsettled({ ...params, threshold: 0 }, [
        { id: "a", demand: 50, held: 50 },
        { id: "b", demand: 50, held: 49.95 },
      ]),
    ).toBe(false);
  });
  it("refuses a participant missing from the view", () => {
    expect(() => nextRate(params, [], "a", undefined)).toThrow(/not in the view/);
  });
});

describe("token buckets", () => {
  it("use a fixed whole-second interval per limit with at least RESOLUTION tokens of the limit", () => {
    expect(fillIntervalSec({ ratePerSec: 5000, burst: 5000 })).toBe(1);
    expect(fillIntervalSec({ ratePerSec: 100, burst: 100 })).toBe(10);
    expect(fillIntervalSec({ ratePerSec: 0.001, burst: 1 })).toBe(3600);
    expect(tokenBucketFor(66.3333, { ratePerSec: 100, burst: 200 })).toEqual({
      maxTokens: 132,
      tokensPerFill: 663,
      fillIntervalSec: 10,
    });
  });
  it("give a bucket back from its own rate (a held rate is never taken for a change)", () => {
    // 61 / 7 × 7 is 60.99999999999999 in floating point: floored naively, 60 tokens, a re-send.
    for (const ratePerSec of [150, 100, 77, 71, 66.6, 1, 0.5]) {
      const limit = { ratePerSec, burst: 100 };
      const sec = fillIntervalSec(limit);
      for (let tokens = 1; tokens <= Math.min(5000, ratePerSec * sec); tokens++) {
        const tb = tokenBucketFor(tokens / sec, limit);
        expect(tb.tokensPerFill, `limit ${ratePerSec}, ${tokens} tokens per ${sec} s`).toBe(tokens);
        expect(tokenBucketFor(rateOf(tb), limit)).toEqual(tb);
      }
    }
  });
  it("never round a rate up, except to the one-token minimum", () => {
    expect(rateOf(tokenBucketFor(0.00001, { ratePerSec: 100, burst: 100 }))).toBeCloseTo(0.1, 9);
    expect(tokenBucketFor(0, { ratePerSec: 100, burst: 100 }).maxTokens).toBe(1);
  });
});

describe("properties (seeded)", () => {
  it("targets sum to the limit and respect the floor", () => {
    for (let seed = 1; seed <= 300; seed++) {
      const r = new Prng(seed);
      const limit = r.int(1, 100_000) / r.pick([1, 10, 1000]);
      const minShare = r.int(0, 100) / 100;
      const demands = Array.from({ length: r.int(1, 12) }, () => (r.next() < 0.2 ? 0 : r.int(0, 10_000)));
      const shares = targetShares(limit, minShare, demands);
      expect(Math.abs(sum(shares) - limit), `seed ${seed}`).toBeLessThan(limit * 1e-9);
      for (const s of shares)
        expect(s, `seed ${seed}`).toBeGreaterThanOrEqual((minShare * limit) / demands.length - 1e-9);
    }
  });

  it("the held rates never sum above the limit while demand shifts, and track it once steady", () => {
    for (let seed = 1; seed <= 200; seed++) {
      const r = new Prng(seed);
      const params = {
        limit: r.int(10, 10_000),
        minShare: r.int(0, 30) / 100,
        threshold: r.int(0, 20) / 100,
      };
      const n = r.int(1, 6);
      const held = new Map<string, number>();
      const sent = new Map<string, number>();
      let demand = Array.from({ length: n }, () => r.int(0, 1000));
      const ids = Array.from({ length: n }, (_, i) => `e${i}`);
      for (let round = 0; round < 30; round++) {
        if (round % 10 === 0) demand = demand.map(() => r.int(0, 1000));
        // Envoys report in a random order; each sees the others' held rates (one aggregated view).
        const order = [...ids].sort(() => r.next() - 0.5);
        for (const id of order) {
          const view = ids.map((p, i) => ({ id: p, demand: demand[i] ?? 0, held: held.get(p) ?? 0 }));
          const rate = nextRate(params, view, id, sent.get(id));
          sent.set(id, rate);
          held.set(id, rate);
          expect(sum([...held.values()]), `seed ${seed} round ${round}`).toBeLessThanOrEqual(
            params.limit * (1 + 1e-9),
          );
        }
      }
      // Steady for 10 rounds: every Envoy is within the hysteresis of its target: a kept rate is
      // within threshold × itself, and what the others keep above their targets (less than
      // threshold × L in all) is all a growing Envoy can be short of.
      const targets = targetShares(params.limit, params.minShare, demand);
      ids.forEach((id, i) => {
        const t = targets[i] ?? 0;
        expect(Math.abs((held.get(id) ?? 0) - t), `seed ${seed} ${id}`).toBeLessThanOrEqual(
          params.threshold * params.limit + 1e-6 * params.limit,
        );
      });
    }
  });

  it("token buckets sum within the limit plus one token per interval per Envoy below one token", () => {
    for (let seed = 1; seed <= 300; seed++) {
      const r = new Prng(seed);
      const limit = { ratePerSec: r.int(1, 100_000) / r.pick([1, 60, 3600]), burst: r.int(1, 100_000) };
      const demands = Array.from({ length: r.int(1, 10) }, () => r.int(0, 1000));
      const shares = targetShares(limit.ratePerSec, r.int(0, 50) / 100, demands);
      const tbs = shares.map((s) => tokenBucketFor(s, limit));
      const sec = fillIntervalSec(limit);
      const tiny = shares.filter((s) => s * sec < 1).length;
      expect(sum(tbs.map(rateOf)), `seed ${seed}`).toBeLessThanOrEqual(limit.ratePerSec + tiny / sec + 1e-9);
      const tinyBurst = shares.filter((s) => (limit.burst * s) / limit.ratePerSec < 1).length;
      expect(sum(tbs.map((t) => t.maxTokens)), `seed ${seed}`).toBeLessThanOrEqual(limit.burst + tinyBurst);
      // Rounding loss per Envoy is below one token per interval: at most 1/RESOLUTION of the limit
      // when the interval is not capped.
      if (sec < 3600)
        for (const [i, tb] of tbs.entries())
          expect((shares[i] ?? 0) - rateOf(tb)).toBeLessThanOrEqual(
            Math.max(limit.ratePerSec / RESOLUTION, 1 / sec) + 1e-9,
          );
    }
  });
});
