import { describe, expect, it } from "vitest";
import type { DecisionResult, EngineMetrics } from "../../src/engine/metrics-port.js";
import { noopMetrics } from "../../src/engine/metrics-port.js";
import { StoreError } from "../../src/store/store.js";
import { desc, engineFor, query } from "./engine-fixture.js";

const RULES = `
domain: edge
descriptors:
  - key: tenant
    rate_limit: { unit: minute, requests_per_unit: 1, name: per_tenant }
  - key: ip
    rate_limit: { unit: second, requests_per_unit: 100 }
  - key: banned
    rate_limit: { unit: second, requests_per_unit: 0 }
  - key: trial
    shadow_mode: true
    rate_limit: { unit: minute, requests_per_unit: 1 }
  - key: plan
    detailed_metric: true
    rate_limits:
      - { unit: second, requests_per_unit: 5 }
      - { unit: day, requests_per_unit: 1000 }
`;

describe("charging", () => {
  it("charges every bucket of an admitted request in one store call", async () => {
    const { engine, calls } = engineFor(RULES, { keyPrefix: "p:" });
    const r = await engine.shouldRateLimit(query("edge", [desc("ip=1"), desc("plan=gold")]));
    expect(r.overallCode).toBe("OK");
    expect(calls).toHaveLength(1);
    expect(calls[0]?.map((t) => t.key)).toEqual([
      "p:tl:v1:{edge|ip=1}:g0",
      "p:tl:v1:{edge|plan=gold}:g0",
      "p:tl:v1:{edge|plan=gold}:g1",
    ]);
    expect(calls[0]?.every((t) => t.cost === 1)).toBe(true);
  });

  it("makes no second call when an enforced descriptor denies the request", async () => {
    const { engine, calls } = engineFor(RULES);
    await engine.shouldRateLimit(query("edge", [desc("tenant=a")]));
    calls.length = 0;
    const r = await engine.shouldRateLimit(query("edge", [desc("ip=1"), desc("tenant=a")]));
    expect(r.overallCode).toBe("OVER_LIMIT");
    expect(calls).toHaveLength(1);
    const ip = await engine.shouldRateLimit(query("edge", [desc("ip=1")]));
    expect(ip.statuses[0]?.limitRemaining).toBe(99);
  });

  it("charges a blocked request's other buckets nothing: they are only peeked", async () => {
    const { engine, calls } = engineFor(RULES);
    const r = await engine.shouldRateLimit(query("edge", [desc("ip=2"), desc("banned=x")]));
    expect(r.overallCode).toBe("OVER_LIMIT");
    expect(r.statuses.map((s) => s.code)).toEqual(["OK", "OVER_LIMIT"]);
    expect(r.statuses[1]?.durationUntilResetSec).toBeUndefined();
    expect(calls[0]).toEqual([expect.objectContaining({ key: "tl:v1:{edge|ip=2}:g0", cost: 0 })]);
    const ip = await engine.shouldRateLimit(query("edge", [desc("ip=2")]));
    expect(ip.statuses[0]?.limitRemaining).toBe(99);
  });

  it("charges only the buckets that can pass when a shadow rule is over", async () => {
    const { engine, calls } = engineFor(RULES);
    await engine.shouldRateLimit(query("edge", [desc("trial=t")]));
    calls.length = 0;
    const r = await engine.shouldRateLimit(query("edge", [desc("trial=t"), desc("ip=3")]));
    expect(r.overallCode).toBe("OK");
    expect(r.statuses.map((s) => s.code)).toEqual(["OK", "OK"]);
    expect(calls.map((c) => c.map((t) => t.key))).toEqual([
      ["tl:v1:{edge|trial=t}:g0", "tl:v1:{edge|ip=3}:g0"],
      ["tl:v1:{edge|ip=3}:g0"],
    ]);
    expect(r.statuses[1]?.limitRemaining).toBe(99);
  });

  it("keeps charging admitted buckets in global shadow mode while reporting the denial", async () => {
    const { engine } = engineFor(RULES, { globalShadowMode: true });
    await engine.shouldRateLimit(query("edge", [desc("tenant=g")]));
    const r = await engine.shouldRateLimit(query("edge", [desc("tenant=g"), desc("ip=4")]));
    expect(r.overallCode).toBe("OK");
    expect(r.statuses.map((s) => s.code)).toEqual(["OVER_LIMIT", "OK"]);
    expect(r.responseHeaders.find((h) => h.key === "Retry-After")).toBeUndefined();
    const ip = await engine.shouldRateLimit(query("edge", [desc("ip=4")]));
    expect(ip.statuses[0]?.limitRemaining).toBe(98); // the shadow-admitted request took one
  });

  it("peeks without consuming when a descriptor's hits_addend is 0", async () => {
    const { engine, calls } = engineFor(RULES);
    const r = await engine.shouldRateLimit(query("edge", [desc("tenant=z", { hitsAddend: 0 })]));
    expect(calls[0]?.[0]?.cost).toBe(0);
    expect(r.statuses[0]?.limitRemaining).toBe(1);
    const real = await engine.shouldRateLimit(query("edge", [desc("tenant=z")]));
    expect(real.overallCode).toBe("OK");
  });
});

describe("metrics", () => {
  it("reports each descriptor's decision and the decision latency", async () => {
    const decisions: [string, string, DecisionResult, number, string | undefined][] = [];
    const seconds: number[] = [];
    const metrics: EngineMetrics = {
      ...noopMetrics,
      decision: (domain, path, result, hits, detail) => decisions.push([domain, path, result, hits, detail]),
      decisionSeconds: (s) => seconds.push(s),
    };
    const { engine } = engineFor(RULES, { metrics });
    await engine.shouldRateLimit(query("edge", [desc("tenant=a")]));
    await engine.shouldRateLimit(
      query("edge", [desc("tenant=a"), desc("trial=t"), desc("nothing=here"), desc("plan=gold")], 1),
    );
    await engine.shouldRateLimit(query("unknown", [desc("tenant=a")]));
    expect(decisions).toEqual([
      ["edge", "edge.tenant", "ok", 1, undefined],
      ["edge", "edge.tenant", "over_limit", 1, undefined],
      ["edge", "edge.trial", "ok", 1, undefined],
      ["edge", "", "no_match", 0, undefined],
      ["edge", "edge.plan", "ok", 1, "plan_gold"],
      ["unknown", "", "no_match", 0, undefined],
    ]);
    expect(seconds).toHaveLength(3);
    expect(seconds.every((s) => s >= 0)).toBe(true);
  });
});

describe("quota mode", () => {
  const QUOTA = `
domain: q
descriptors:
  - key: monthly
    quota_mode: true
    rate_limit: { unit: month, requests_per_unit: 1 }
  - key: observe
    quota_mode: true
    shadow_mode: true
    rate_limit: { unit: month, requests_per_unit: 1 }
  - key: ip
    rate_limit: { unit: second, requests_per_unit: 10 }
`;

  it("denies when every quota_mode descriptor is over though the others pass, charging nothing", async () => {
    const { engine } = engineFor(QUOTA);
    await engine.shouldRateLimit(query("q", [desc("monthly=m")]));
    const lone = await engine.shouldRateLimit(query("q", [desc("monthly=m")]));
    expect(lone.overallCode).toBe("OVER_LIMIT"); // the only quota descriptor is over
    const r = await engine.shouldRateLimit(query("q", [desc("monthly=m"), desc("ip=1")]));
    expect(r.overallCode).toBe("OVER_LIMIT"); // every quota descriptor (one) is still over
    const ip = await engine.shouldRateLimit(query("q", [desc("ip=1")]));
    expect(ip.statuses[0]?.limitRemaining).toBe(9); // the denied request charged nothing
  });

  it("never lets a shadow-mode quota descriptor deny", async () => {
    const { engine } = engineFor(QUOTA);
    await engine.shouldRateLimit(query("q", [desc("observe=o")]));
    const r = await engine.shouldRateLimit(query("q", [desc("observe=o")]));
    expect(r.overallCode).toBe("OK");
  });
});

describe("store failures", () => {
  it("propagate the store's error and are still timed", async () => {
    const seconds: number[] = [];
    const failing = {
      kind: "failing",
      take: () => Promise.reject(new StoreError("down", { code: "connection", transient: true })),
      reset: async () => {},
      ready: async () => {},
      close: async () => {},
    };
    const { engine } = engineFor(RULES, {
      store: failing,
      metrics: { ...noopMetrics, decisionSeconds: (s) => seconds.push(s) },
    });
    await expect(engine.shouldRateLimit(query("edge", [desc("ip=1")]))).rejects.toBeInstanceOf(StoreError);
    expect(seconds).toHaveLength(1);
  });
});
