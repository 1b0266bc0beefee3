import { describe, expect, it } from "vitest";
import type { Policy } from "../../../src/engine/types.js";
import { gcraRefund, gcraStep, roundHalfUp } from "../../../src/store/memory/gcra.js";

const NOW = 1_700_000_000_000_000; // µs
const tenPerSecondBurst5: Policy = { algorithm: "gcra", limit: 10, periodMs: 1000, burst: 5 };

describe("gcraStep", () => {
  it("charges a fresh bucket one emission interval and keeps it for that long", () => {
    const step = gcraStep({ storedTat: undefined, nowUs: NOW, cost: 1, policy: tenPerSecondBurst5 });
    expect(step.outcome).toEqual({ allowed: true, remaining: 4, retryAfterMs: 0, resetAfterMs: 100 });
    expect(step.write).toEqual({ tat: NOW + 100_000, expiresAtMs: (NOW + 100_000) / 1000 + 1 });
  });

  it("treats a theoretical arrival time in the past as a full bucket", () => {
    const step = gcraStep({ storedTat: NOW - 5_000_000, nowUs: NOW, cost: 2, policy: tenPerSecondBurst5 });
    expect(step.outcome).toMatchObject({ allowed: true, remaining: 3, resetAfterMs: 200 });
    expect(step.write?.tat).toBe(NOW + 200_000);
  });

  it("denies an empty bucket with the time until one token is back, and writes nothing", () => {
    const step = gcraStep({ storedTat: NOW + 500_000, nowUs: NOW, cost: 1, policy: tenPerSecondBurst5 });
    expect(step.outcome).toEqual({ allowed: false, remaining: 0, retryAfterMs: 100, resetAfterMs: 500 });
    expect(step.write).toBeUndefined();
  });

  it("reports a denied cost of 3 as admissible after three emission intervals", () => {
    const step = gcraStep({ storedTat: NOW + 450_000, nowUs: NOW, cost: 3, policy: tenPerSecondBurst5 });
    expect(step.outcome).toEqual({ allowed: false, remaining: 0, retryAfterMs: 250, resetAfterMs: 450 });
  });

  it("peeks with cost 0: whole tokens only, time to full rounded up, no write", () => {
    const step = gcraStep({ storedTat: NOW + 250_001, nowUs: NOW, cost: 0, policy: tenPerSecondBurst5 });
    expect(step.outcome).toEqual({ allowed: true, remaining: 2, retryAfterMs: 0, resetAfterMs: 251 });
    expect(step.write).toBeUndefined();
  });

  it("never admits a cost above the burst and says so with retry-after -1", () => {
    const step = gcraStep({ storedTat: undefined, nowUs: NOW, cost: 6, policy: tenPerSecondBurst5 });
    expect(step.outcome).toEqual({ allowed: false, remaining: 5, retryAfterMs: -1, resetAfterMs: 0 });
    expect(step.write).toBeUndefined();
  });

  it("admits exactly the burst when the emission interval is not a whole number of µs", () => {
    const policy: Policy = { algorithm: "gcra", limit: 3, periodMs: 1000, burst: 3 };
    let tat: number | undefined;
    const remaining: number[] = [];
    for (let i = 0; i < 3; i++) {
      const step = gcraStep({ storedTat: tat, nowUs: NOW, cost: 1, policy });
      expect(step.outcome.allowed).toBe(true);
      remaining.push(step.outcome.remaining);
      tat = step.write?.tat;
    }
    expect(remaining).toEqual([2, 1, 0]);
    // Each write rounds to whole µs: 333333, 666666, 999999.
    expect(tat).toBe(NOW + 999_999);
    const denied = gcraStep({ storedTat: tat, nowUs: NOW, cost: 1, policy });
    expect(denied.outcome).toEqual({ allowed: false, remaining: 0, retryAfterMs: 334, resetAfterMs: 1000 });
  });

  it("admits the whole burst at one instant and counts it down exactly, whatever the emission interval", () => {
    // Non-whole emission intervals (7/min: T = 8571428.571… µs; 3/s; 90/min; 1,000,000/min) at a
    // 16-digit epoch time. Adding cost·T to the tat itself rounded it to 0.25 µs and each write rounds
    // to a whole µs: remaining came out one low and the last token of the burst was refused.
    const policies: Policy[] = [
      { algorithm: "gcra", limit: 7, periodMs: 60_000, burst: 4 },
      { algorithm: "gcra", limit: 3, periodMs: 1000, burst: 3 },
      { algorithm: "gcra", limit: 90, periodMs: 60_000, burst: 90 },
      { algorithm: "gcra", limit: 1_000_000, periodMs: 60_000, burst: 1000 },
      { algorithm: "gcra", limit: 7, periodMs: 1000, burst: 1 },
    ];
    for (const policy of policies) {
      for (let now = 1_796_238_435_173_823; now < 1_796_238_435_173_823 + 16; now++) {
        for (const cost of [1, 2]) {
          let tat: number | undefined;
          const seen: number[] = [];
          const charges = Math.floor(policy.burst / cost);
          for (let i = 0; i < charges; i++) {
            const step = gcraStep({ storedTat: tat, nowUs: now, cost, policy });
            expect(step.outcome.allowed, `${policy.limit}/${policy.periodMs} charge ${i} at ${now}`).toBe(
              true,
            );
            seen.push(step.outcome.remaining);
            tat = step.write?.tat;
            const peek = gcraStep({ storedTat: tat, nowUs: now, cost: 0, policy });
            expect(peek.outcome.remaining).toBe(step.outcome.remaining);
          }
          expect(seen).toEqual(Array.from({ length: charges }, (_, i) => policy.burst - cost * (i + 1)));
          // Nothing beyond the burst, even with the slack.
          if (policy.burst - charges * cost < cost)
            expect(gcraStep({ storedTat: tat, nowUs: now, cost, policy }).outcome.allowed).toBe(false);
        }
      }
    }
  });

  it("reports no negative remaining when the stored state exceeds a lowered burst", () => {
    const step = gcraStep({ storedTat: NOW + 900_000, nowUs: NOW, cost: 0, policy: tenPerSecondBurst5 });
    expect(step.outcome.remaining).toBe(0);
  });
});

describe("gcraRefund", () => {
  it("moves the theoretical arrival time back by cost emission intervals", () => {
    const next = gcraRefund({ storedTat: NOW + 300_000, nowUs: NOW, cost: 1, policy: tenPerSecondBurst5 });
    expect(next).toEqual({ tat: NOW + 200_000, expiresAtMs: (NOW + 200_000) / 1000 + 1 });
  });

  it("deletes the bucket when the refund makes it full", () => {
    expect(gcraRefund({ storedTat: NOW + 300_000, nowUs: NOW, cost: 3, policy: tenPerSecondBurst5 })).toBe(
      "delete",
    );
  });

  it("leaves an absent bucket alone", () => {
    expect(
      gcraRefund({ storedTat: undefined, nowUs: NOW, cost: 1, policy: tenPerSecondBurst5 }),
    ).toBeUndefined();
  });
});

describe("roundHalfUp", () => {
  it("rounds halves up as Lua's math.floor(x + 0.5) does", () => {
    expect([roundHalfUp(2.5), roundHalfUp(2.49), roundHalfUp(-2.5), roundHalfUp(7)]).toEqual([3, 2, -2, 7]);
  });
});
