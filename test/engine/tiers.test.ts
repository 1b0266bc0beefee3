import { describe, expect, it } from "vitest";
import type { RateLimitQuery } from "../../src/engine/types.js";
import { compileText, EDGE, tierEngine } from "../helpers/tiers-fixture.js";

const q = (entries: Record<string, string>, hits = 1): RateLimitQuery => ({
  domain: "edge",
  descriptors: [
    {
      entries: Object.entries(entries).map(([key, value]) => ({ key, value })),
      limit: undefined,
      hitsAddend: undefined,
    },
  ],
  hitsAddend: hits,
});

const tenants = (pairs: Record<string, string>) => new Map(Object.entries(pairs));

describe("tier lookup in the engine", () => {
  it("applies the limit of the tenant's tier and route class", async () => {
    const { engine } = tierEngine(compileText(EDGE, tenants({ acme: "gold" })));
    const answer = await engine.shouldRateLimit(q({ tenant: "acme", route_class: "read" }));
    expect(answer.statuses[0]).toMatchObject({
      code: "OK",
      currentLimit: { requestsPerUnit: 100, unit: "minute" },
      limitRemaining: 99,
    });
  });

  it("gives an unknown tenant the default tier, and an unlisted class the tier's fallback", async () => {
    const { engine } = tierEngine(compileText(EDGE, tenants({ acme: "gold" })));
    const read = await engine.shouldRateLimit(q({ tenant: "nobody", route_class: "read" }));
    expect(read.statuses[0]?.currentLimit?.requestsPerUnit).toBe(10);
    const other = await engine.shouldRateLimit(q({ route_class: "admin", tenant: "nobody" }));
    expect(other.statuses[0]?.currentLimit?.requestsPerUnit).toBe(2);
    const bare = await engine.shouldRateLimit(q({ tenant: "nobody" }));
    expect(bare.statuses[0]?.currentLimit?.requestsPerUnit).toBe(2);
  });

  it("answers OK without a limit when the tier has no limit for the class", async () => {
    const { engine } = tierEngine(compileText(EDGE, tenants({ acme: "gold" })));
    const answer = await engine.shouldRateLimit(q({ tenant: "acme", route_class: "admin" }));
    expect(answer.overallCode).toBe("OK");
    expect(answer.statuses[0]?.currentLimit).toBeUndefined();
  });

  it("denies once the tier's limit is used up", async () => {
    const { engine } = tierEngine(compileText(EDGE));
    const first = await engine.shouldRateLimit(q({ tenant: "t1", route_class: "write" }, 2));
    expect(first.overallCode).toBe("OK");
    const second = await engine.shouldRateLimit(q({ tenant: "t1", route_class: "write" }));
    expect(second.overallCode).toBe("OVER_LIMIT");
  });

  it("keeps a tenant's bucket when the tenant moves to another tier (no key migration)", async () => {
    const t = tierEngine(compileText(EDGE, tenants({ acme: "free" })));
    const before = t.engine.bucketKeys(q({ tenant: "acme", route_class: "read" }));
    await t.engine.shouldRateLimit(q({ tenant: "acme", route_class: "read" }, 4));
    t.state.tiers = compileText(EDGE, tenants({ acme: "gold" })).tiers;
    expect(t.engine.bucketKeys(q({ tenant: "acme", route_class: "read" }))[0]).toBe(before[0]);
    const after = await t.engine.shouldRateLimit(q({ tenant: "acme", route_class: "read" }));
    // Same bucket, new limit. GCRA keeps time, not a count: 4 hits at 10/minute put the bucket 24 s
    // ahead, which at 100/minute is 40 requests; this one makes 41 (a fresh bucket would say 99).
    expect(after.statuses[0]).toMatchObject({ currentLimit: { requestsPerUnit: 100 }, limitRemaining: 59 });
  });

  it("keeps the bucket when a tier's limit changes", async () => {
    const t = tierEngine(compileText(EDGE));
    const key = t.engine.bucketKeys(q({ tenant: "x", route_class: "read" }));
    t.state = compileText(EDGE.replace("requests_per_unit: 10 }", "requests_per_unit: 20 }"));
    expect(t.engine.bucketKeys(q({ tenant: "x", route_class: "read" }))).toEqual(key);
    expect(key[0]).toMatch(/\{edge\|tenant=x,route_class=read\}:g0$/);
  });

  it("leaves descriptors that carry a tier, or other keys, to the descriptor tree", async () => {
    const yaml = `${EDGE}descriptors:
  - key: tenant
    descriptors:
      - key: tier
        value: gold
        rate_limit: { unit: second, requests_per_unit: 7 }
`;
    const { engine } = tierEngine(compileText(yaml, tenants({ acme: "free" })));
    const given = await engine.shouldRateLimit(q({ tenant: "acme", tier: "gold" }));
    expect(given.statuses[0]?.currentLimit).toMatchObject({ requestsPerUnit: 7, unit: "second" });
    const other = await engine.shouldRateLimit(q({ tenant: "acme", path: "/x" }));
    expect(other.statuses[0]?.currentLimit).toBeUndefined();
  });

  it("prefers a matching descriptor tree rule over the tier", async () => {
    const yaml = `${EDGE}descriptors:
  - key: tenant
    value: vip
    descriptors:
      - key: route_class
        rate_limit: { unit: minute, requests_per_unit: 5000 }
`;
    const { engine } = tierEngine(compileText(yaml, tenants({ vip: "free" })));
    const vip = await engine.shouldRateLimit(q({ tenant: "vip", route_class: "read" }));
    expect(vip.statuses[0]?.currentLimit?.requestsPerUnit).toBe(5000);
    const plain = await engine.shouldRateLimit(q({ tenant: "acme", route_class: "read" }));
    expect(plain.statuses[0]?.currentLimit?.requestsPerUnit).toBe(10);
  });
});

describe("tier buckets", () => {
  const tenantsOf = (pairs: Record<string, string>) => new Map(Object.entries(pairs));

  it("are the same whatever order the tenant and route_class entries arrive in", async () => {
    const { engine } = tierEngine(compileText(EDGE, tenantsOf({})));
    await engine.shouldRateLimit(q({ tenant: "t1", route_class: "read" }, 6));
    const reversed = await engine.shouldRateLimit(q({ route_class: "read", tenant: "t1" }, 1));
    expect(reversed.statuses[0]?.limitRemaining).toBe(3); // 10 − 6 − 1: one bucket, not two
  });

  it("share one fallback bucket for every route_class the tier does not list", async () => {
    const { engine } = tierEngine(compileText(EDGE, tenantsOf({})));
    expect((await engine.shouldRateLimit(q({ tenant: "t2", route_class: "made-up-1" }))).overallCode).toBe(
      "OK",
    );
    expect((await engine.shouldRateLimit(q({ tenant: "t2", route_class: "made-up-2" }))).overallCode).toBe(
      "OK",
    );
    expect((await engine.shouldRateLimit(q({ tenant: "t2", route_class: "made-up-3" }))).overallCode).toBe(
      "OVER_LIMIT",
    );
  });
});
