import { AggregatorRegistry, Histogram, Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { FastHistogram } from "../../src/metrics/fast-histogram.js";

const BUCKETS = [0.001, 0.005, 0.01, 0.05];
const VALUES = [0, 0.0005, 0.001, 0.0011, 0.004, 0.005, 0.02, 0.05, 0.051, 3, 1e-9];

/** The same metric as prom-client's Histogram and as FastHistogram, each on its own registry. */
function pair(labelNames: string[] = []) {
  const ours = new Registry();
  const theirs = new Registry();
  const opts = { name: "t_seconds", help: "help text", buckets: BUCKETS, labelNames };
  return {
    ours,
    theirs,
    fast: new FastHistogram({ ...opts, registers: [ours] }),
    reference: new Histogram({ ...opts, registers: [theirs] }),
  };
}

describe("FastHistogram", () => {
  it("exports what prom-client's Histogram exports, before and after observations", async () => {
    const { ours, theirs, fast, reference } = pair();
    expect(await ours.metrics()).toBe(await theirs.metrics());
    for (const v of VALUES) {
      fast.observe(v);
      reference.observe(v);
    }
    expect(await ours.metrics()).toBe(await theirs.metrics());
    expect(await ours.getMetricsAsJSON()).toEqual(await theirs.getMetricsAsJSON());
    expect(await ours.metrics()).toContain('t_seconds_bucket{le="0.005"} 7');
  });

  it("keeps labelled series apart, in the same text as prom-client", async () => {
    const { ours, theirs, fast, reference } = pair(["operation"]);
    expect(await ours.metrics()).toBe(await theirs.metrics());
    // Series are exported in creation order; the reference creates "reset" first (value 0).
    const reset = fast.labels({ operation: "reset" });
    const take = fast.labels({ operation: "take" });
    VALUES.forEach((v, i) => {
      (i % 3 === 0 ? reset : take).observe(v);
      reference.labels({ operation: i % 3 === 0 ? "reset" : "take" }).observe(v);
    });
    expect(fast.labels({ operation: "take" })).toBe(take);
    expect(await ours.metrics()).toBe(await theirs.metrics());
    expect(await ours.getMetricsAsJSON()).toEqual(await theirs.getMetricsAsJSON());
    expect(() => fast.labels({ op: "x" })).toThrow(/not included/);
  });

  it("aggregates across workers as prom-client's Histogram does", async () => {
    const workers = [pair(), pair()];
    workers.forEach((w, i) => {
      for (const v of VALUES.slice(i)) {
        w.fast.observe(v);
        w.reference.observe(v);
      }
    });
    const ours = AggregatorRegistry.aggregate(
      await Promise.all(workers.map((w) => w.ours.getMetricsAsJSON())),
    );
    const theirs = AggregatorRegistry.aggregate(
      await Promise.all(workers.map((w) => w.theirs.getMetricsAsJSON())),
    );
    expect(await ours.metrics()).toBe(await theirs.metrics());
    expect(await ours.metrics()).toContain(`t_seconds_count ${2 * VALUES.length - 1}`);
  });

  it("refuses a non-finite value and decreasing buckets", () => {
    const { fast } = pair();
    expect(() => fast.observe(Number.NaN)).toThrow(TypeError);
    expect(
      () => new FastHistogram({ name: "x", help: "x", buckets: [1, 1], registers: [new Registry()] }),
    ).toThrow(/increase/);
  });

  it("starts again from zero on reset", async () => {
    const { ours, theirs, fast, reference } = pair();
    fast.observe(1);
    reference.observe(1);
    fast.reset();
    reference.reset();
    expect(await ours.metrics()).toBe(await theirs.metrics());
    fast.observe(0.002);
    reference.observe(0.002);
    expect(await ours.metrics()).toBe(await theirs.metrics());
    expect(await ours.metrics()).toContain("t_seconds_count 1");
  });
});
