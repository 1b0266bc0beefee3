import { describe, expect, it } from "vitest";
import { DEADLINE_MS, missedAllowed } from "./outage-suite.js";

/** The post-recovery bound of outage-suite.ts, without a chaos run: stall-aware, and still strict. */
describe("missed deadlines allowed after recovery", () => {
  const stalled = DEADLINE_MS / 1000; // a stall as long as the deadline
  const quiet = 0.005;

  it("allows none in ~16 calls when the service's loop did not stall", () => {
    expect(missedAllowed(16, quiet)).toBe(0);
  });

  it("allows one late call in ~16 when the loop stalled past half the deadline", () => {
    expect(missedAllowed(16, stalled)).toBe(1);
    expect(missedAllowed(16, DEADLINE_MS / 2000)).toBe(0); // at the threshold: not a stall
  });

  it("still fails a guard that did not go back to the store (most calls missed), stall or not", () => {
    for (const calls of [16, 30, 60]) {
      const regression = Math.ceil(calls / 2);
      expect(regression).toBeGreaterThan(missedAllowed(calls, stalled));
      expect(regression).toBeGreaterThan(missedAllowed(calls, quiet));
    }
  });

  it("keeps the 5% share for long windows", () => {
    expect(missedAllowed(100, quiet)).toBe(5);
    expect(missedAllowed(100, stalled)).toBe(5);
  });
});
