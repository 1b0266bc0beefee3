import { describe, expect, it } from "vitest";
import { type BackoffSettings, openDurationMs } from "../../../src/store/guard/backoff.js";
import { DEFAULT_BREAKER } from "../../../src/store/guard/breaker.js";

const settings: BackoffSettings = { baseMs: 1_000, multiplier: 2, maxMs: 30_000, jitter: 0.2 };
const middle = () => 0.5;

describe("openDurationMs", () => {
  it("doubles the open time with each back-to-back opening", () => {
    expect([0, 1, 2, 3].map((a) => openDurationMs(settings, a, middle))).toEqual([
      1_000, 2_000, 4_000, 8_000,
    ]);
  });

  it("never exceeds the cap, however many openings", () => {
    expect(openDurationMs(settings, 10, middle)).toBe(30_000);
    expect(openDurationMs(settings, 4, () => 0.999_999)).toBeCloseTo(19_200, 0);
    expect(openDurationMs(settings, 5, () => 0.999_999)).toBe(30_000);
  });

  it("keeps jitter within plus or minus the jitter ratio", () => {
    expect(openDurationMs(settings, 1, () => 0)).toBe(1_600);
    expect(openDurationMs(settings, 1, () => 0.999_999)).toBeCloseTo(2_400, 0);
    expect(openDurationMs(settings, 1, () => 0)).toBeLessThan(openDurationMs(settings, 1, () => 0.7));
  });

  it("uses no jitter when the ratio is zero", () => {
    expect(openDurationMs({ ...settings, jitter: 0 }, 2, () => 0.123)).toBe(4_000);
  });

  it("with the defaults, starts at 250 ms and never exceeds 1 s, jitter included", () => {
    const d = DEFAULT_BREAKER;
    expect(openDurationMs(d, 0, middle)).toBe(250);
    expect(openDurationMs(d, 1, middle)).toBe(500);
    expect(openDurationMs(d, 2, () => 0)).toBe(800);
    for (const attempt of [2, 3, 10, 100]) {
      expect(openDurationMs(d, attempt, () => 0.999_999)).toBe(1_000);
    }
    expect(openDurationMs(d, 3, () => 0)).toBe(1_000);
  });
});
