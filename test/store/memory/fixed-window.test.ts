import { describe, expect, it } from "vitest";
import { type Policy, UNIT_MS } from "../../../src/engine/types.js";
import { fixedWindowRefund, fixedWindowStep, msToWindowEnd } from "../../../src/store/memory/fixed-window.js";

const threePerSecond: Policy = { algorithm: "fixed_window", limit: 3, periodMs: 1000, burst: 3 };
const NOW_MS = 1_700_000_000_123;
const NOW = NOW_MS * 1000 + 456; // µs

describe("msToWindowEnd", () => {
  it("ends epoch-aligned windows at the next multiple of the period", () => {
    expect(msToWindowEnd(NOW, 1000)).toBe(877);
    expect(msToWindowEnd(NOW_MS * 1000 - 123_000, 1000)).toBe(1000);
  });

  it("starts week windows on Thursday 00:00 UTC, like the epoch", () => {
    const thursday = Date.UTC(2024, 0, 4);
    expect(new Date(thursday).getUTCDay()).toBe(4);
    expect(msToWindowEnd(thursday * 1000, UNIT_MS.week)).toBe(UNIT_MS.week);
    const saturdayNoon = Date.UTC(2024, 0, 6, 12);
    const end = saturdayNoon + msToWindowEnd(saturdayNoon * 1000, UNIT_MS.week);
    expect(new Date(end).toISOString()).toBe("2024-01-11T00:00:00.000Z");
  });
});

describe("fixedWindowStep", () => {
  it("counts hits into a new counter that lives until the window end", () => {
    const step = fixedWindowStep({ storedCount: undefined, nowUs: NOW, cost: 2, policy: threePerSecond });
    expect(step.outcome).toEqual({ allowed: true, remaining: 1, retryAfterMs: 0, resetAfterMs: 877 });
    expect(step.write).toEqual({ count: 2, expiresAtMs: NOW_MS + 877 });
  });

  it("denies hits past the limit with retry-after at the window end, and counts nothing", () => {
    const step = fixedWindowStep({ storedCount: 2, nowUs: NOW, cost: 2, policy: threePerSecond });
    expect(step.outcome).toEqual({ allowed: false, remaining: 1, retryAfterMs: 877, resetAfterMs: 877 });
    expect(step.write).toBeUndefined();
  });

  it("never admits more hits than the limit in one call: retry-after -1", () => {
    const step = fixedWindowStep({ storedCount: undefined, nowUs: NOW, cost: 4, policy: threePerSecond });
    expect(step.outcome).toMatchObject({ allowed: false, remaining: 3, retryAfterMs: -1 });
  });

  it("peeks with cost 0 without writing", () => {
    const step = fixedWindowStep({ storedCount: 3, nowUs: NOW, cost: 0, policy: threePerSecond });
    expect(step.outcome).toEqual({ allowed: true, remaining: 0, retryAfterMs: 0, resetAfterMs: 877 });
    expect(step.write).toBeUndefined();
  });
});

describe("fixedWindowRefund", () => {
  it("gives hits back but never goes below zero, and leaves an absent counter alone", () => {
    expect(fixedWindowRefund(3, 1)).toBe(2);
    expect(fixedWindowRefund(3, 10)).toBe(0);
    expect(fixedWindowRefund(undefined, 1)).toBeUndefined();
  });
});
