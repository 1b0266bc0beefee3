import { describe, expect, it } from "vitest";
import { SlidingWindow } from "../../../src/store/guard/window.js";

describe("SlidingWindow", () => {
  it("counts calls and failures recorded within the window", () => {
    const w = new SlidingWindow({ windowMs: 10_000, slots: 10 });
    w.record(1_000, true);
    w.record(2_500, false);
    w.record(9_999, true);
    expect(w.counts(9_999)).toEqual({ total: 3, failures: 2 });
  });

  it("forgets calls once their slot has left the window", () => {
    const w = new SlidingWindow({ windowMs: 10_000, slots: 10 });
    w.record(1_000, true);
    w.record(5_000, true);
    expect(w.counts(10_999)).toEqual({ total: 2, failures: 2 });
    expect(w.counts(11_000)).toEqual({ total: 1, failures: 1 });
    expect(w.counts(15_000)).toEqual({ total: 0, failures: 0 });
  });

  it("reuses a slot for a later lap without mixing in the old counts", () => {
    const w = new SlidingWindow({ windowMs: 1_000, slots: 2 });
    w.record(0, true);
    w.record(1_000, false);
    expect(w.counts(1_000)).toEqual({ total: 1, failures: 0 });
  });

  it("is empty after clear", () => {
    const w = new SlidingWindow({ windowMs: 1_000 });
    w.record(10, true);
    w.clear();
    expect(w.counts(10)).toEqual({ total: 0, failures: 0 });
  });
});
