import { describe, expect, it } from "vitest";
import { desc, engineFor, query } from "./engine-fixture.js";

const BASIC = `
domain: edge
descriptors:
  - key: tenant
    descriptors:
      - key: route_class
        value: read
        rate_limit: { unit: second, requests_per_unit: 2, name: read }
      - key: route_class
        value: write
        rate_limit: { unit: minute, requests_per_unit: 1, name: write }
      - key: route_class
        value: shadow
        shadow_mode: true
        rate_limit: { unit: minute, requests_per_unit: 1 }
      - key: route_class
        value: free
        rate_limit: { unlimited: true }
      - key: route_class
        value: blocked
        rate_limit: { unit: second, requests_per_unit: 0 }
  - key: ip
    rate_limit: { unit: second, requests_per_unit: 100 }
`;

describe("decisions", () => {
  it("answers OK without a limit for an unknown domain and for a descriptor no rule matches", async () => {
    const { engine, storeCalls } = engineFor(BASIC);
    const unknown = await engine.shouldRateLimit(query("nope", [desc("tenant=a,route_class=read")]));
    expect(unknown.overallCode).toBe("OK");
    expect(unknown.statuses).toEqual([
      { code: "OK", currentLimit: undefined, limitRemaining: 0, durationUntilResetSec: undefined },
    ]);
    const nomatch = await engine.shouldRateLimit(query("edge", [desc("user=x")]));
    expect(nomatch.statuses[0]?.currentLimit).toBeUndefined();
    expect(storeCalls()).toBe(0);
  });

  it("reports the limit and whole tokens left while within the limit, then OVER_LIMIT with 0 left", async () => {
    const { engine } = engineFor(BASIC);
    const q = query("edge", [desc("tenant=acme,route_class=read")]);
    const first = await engine.shouldRateLimit(q);
    expect(first.overallCode).toBe("OK");
    expect(first.statuses[0]).toEqual({
      code: "OK",
      currentLimit: { requestsPerUnit: 2, unit: "second", name: "read" },
      limitRemaining: 1,
      durationUntilResetSec: 1,
    });
    await engine.shouldRateLimit(q);
    const third = await engine.shouldRateLimit(q);
    expect(third.overallCode).toBe("OVER_LIMIT");
    expect(third.statuses[0]?.code).toBe("OVER_LIMIT");
    expect(third.statuses[0]?.limitRemaining).toBe(0);
    expect(third.statuses[0]?.durationUntilResetSec).toBe(1);
  });

  it("gives every runtime value of a value-less key its own bucket", async () => {
    const { engine } = engineFor(BASIC);
    for (let i = 0; i < 2; i++)
      await engine.shouldRateLimit(query("edge", [desc("tenant=a,route_class=write")]));
    const other = await engine.shouldRateLimit(query("edge", [desc("tenant=b,route_class=write")]));
    expect(other.overallCode).toBe("OK");
  });

  it("charges nothing when the request is denied (all-or-nothing across descriptors)", async () => {
    const { engine } = engineFor(BASIC);
    await engine.shouldRateLimit(query("edge", [desc("tenant=a,route_class=write")]));
    const both = query("edge", [desc("ip=1.2.3.4"), desc("tenant=a,route_class=write")]);
    const denied = await engine.shouldRateLimit(both);
    expect(denied.overallCode).toBe("OVER_LIMIT");
    expect(denied.statuses[0]?.code).toBe("OK");
    const ipOnly = await engine.shouldRateLimit(query("edge", [desc("ip=1.2.3.4")]));
    expect(ipOnly.statuses[0]?.limitRemaining).toBe(99); // the denied request took nothing from the ip bucket
  });

  it("treats request hits_addend 0 as 1 and charges a larger hits_addend", async () => {
    const { engine } = engineFor(BASIC);
    const r = await engine.shouldRateLimit(query("edge", [desc("ip=9")], 0));
    expect(r.statuses[0]?.limitRemaining).toBe(99);
    const r2 = await engine.shouldRateLimit(query("edge", [desc("ip=9")], 10));
    expect(r2.statuses[0]?.limitRemaining).toBe(89);
  });

  it("lets a present per-descriptor hits_addend override the request's, and 0 check without consuming", async () => {
    const { engine } = engineFor(BASIC);
    const r = await engine.shouldRateLimit(query("edge", [desc("ip=7", { hitsAddend: 5 })], 50));
    expect(r.statuses[0]?.limitRemaining).toBe(95);
    const peek = await engine.shouldRateLimit(query("edge", [desc("ip=7", { hitsAddend: 0 })]));
    const peek2 = await engine.shouldRateLimit(query("edge", [desc("ip=7", { hitsAddend: 0 })]));
    expect(peek.statuses[0]?.limitRemaining).toBe(95);
    expect(peek2.statuses[0]?.limitRemaining).toBe(95);
  });

  it("denies a cost larger than the capacity with no retry time", async () => {
    const { engine } = engineFor(BASIC);
    const r = await engine.shouldRateLimit(query("edge", [desc("tenant=a,route_class=read")], 3));
    expect(r.overallCode).toBe("OVER_LIMIT");
    expect(r.statuses[0]?.durationUntilResetSec).toBeUndefined();
    expect(r.responseHeaders.find((h) => h.key === "Retry-After")).toBeUndefined();
  });

  it("answers unlimited with limit_remaining 4294967295 and blocks requests_per_unit 0 without a store call", async () => {
    const { engine, storeCalls } = engineFor(BASIC);
    const free = await engine.shouldRateLimit(query("edge", [desc("tenant=a,route_class=free")]));
    expect(free.statuses[0]).toMatchObject({
      code: "OK",
      limitRemaining: 4294967295,
      currentLimit: undefined,
    });
    const blocked = await engine.shouldRateLimit(query("edge", [desc("tenant=a,route_class=blocked")]));
    expect(blocked.overallCode).toBe("OVER_LIMIT");
    expect(blocked.statuses[0]?.currentLimit?.requestsPerUnit).toBe(0);
    expect(storeCalls()).toBe(0);
  });

  it("reports shadow_mode rules OK while still counting them", async () => {
    const { engine } = engineFor(BASIC);
    const q = query("edge", [desc("tenant=a,route_class=shadow")]);
    await engine.shouldRateLimit(q);
    const r = await engine.shouldRateLimit(q);
    expect(r.overallCode).toBe("OK");
    expect(r.statuses[0]?.code).toBe("OK");
    expect(r.statuses[0]?.limitRemaining).toBe(0);
  });

  it("charges the other buckets when only a shadow rule is over", async () => {
    const { engine } = engineFor(BASIC);
    await engine.shouldRateLimit(query("edge", [desc("tenant=a,route_class=shadow")]));
    const r = await engine.shouldRateLimit(
      query("edge", [desc("tenant=a,route_class=shadow"), desc("ip=5")]),
    );
    expect(r.overallCode).toBe("OK");
    expect(r.statuses[1]?.limitRemaining).toBe(99);
    const again = await engine.shouldRateLimit(query("edge", [desc("ip=5")]));
    expect(again.statuses[0]?.limitRemaining).toBe(98);
  });

  it("flips only the overall code in global shadow mode", async () => {
    const { engine } = engineFor(BASIC, { globalShadowMode: true });
    const q = query("edge", [desc("tenant=a,route_class=write")]);
    await engine.shouldRateLimit(q);
    const r = await engine.shouldRateLimit(q);
    expect(r.overallCode).toBe("OK");
    expect(r.statuses[0]?.code).toBe("OVER_LIMIT");
  });

  it("replaces a configured limit with a request-supplied override when the domain exists", async () => {
    const { engine } = engineFor(BASIC);
    const q = query("edge", [
      desc("tenant=a,route_class=read", { limit: { requestsPerUnit: 5, unit: "minute" } }),
    ]);
    const r = await engine.shouldRateLimit(q);
    expect(r.statuses[0]?.currentLimit).toEqual({ requestsPerUnit: 5, unit: "minute", name: undefined });
    expect(r.statuses[0]?.limitRemaining).toBe(4);
    const unmatched = await engine.shouldRateLimit(
      query("edge", [desc("x=y", { limit: { requestsPerUnit: 1, unit: "hour" } })]),
    );
    expect(unmatched.statuses[0]?.currentLimit?.requestsPerUnit).toBe(1);
    const noDomain = await engine.shouldRateLimit(
      query("zzz", [desc("x=y", { limit: { requestsPerUnit: 1, unit: "hour" } })]),
    );
    expect(noDomain.statuses[0]?.currentLimit).toBeUndefined();
  });
});

describe("decisions across rules", () => {
  const RULES = `
domain: api
descriptors:
  - key: user
    rate_limit: { unit: second, requests_per_unit: 10, name: per_user }
  - key: vip
    rate_limit: { unit: second, requests_per_unit: 1000, name: vip, replaces: [{ name: per_user }] }
  - key: plan
    rate_limits:
      - { unit: second, requests_per_unit: 3, name: burst }
      - { unit: hour, requests_per_unit: 4, name: hourly }
  - key: quota_a
    quota_mode: true
    rate_limit: { unit: minute, requests_per_unit: 1 }
  - key: quota_b
    quota_mode: true
    rate_limit: { unit: minute, requests_per_unit: 1 }
`;

  it("drops a limit another matched rule replaces", async () => {
    const { engine } = engineFor(RULES);
    const r = await engine.shouldRateLimit(query("api", [desc("user=u"), desc("vip=yes")]));
    expect(r.statuses[0]?.currentLimit).toBeUndefined();
    expect(r.statuses[1]?.currentLimit?.name).toBe("vip");
  });

  it("requires every limit of a rule to pass and reports the binding one", async () => {
    const engineForClock = engineFor(RULES);
    const { engine } = engineForClock;
    const q = query("api", [desc("plan=p")]);
    const first = await engine.shouldRateLimit(q);
    expect(first.statuses[0]?.currentLimit?.name).toBe("burst"); // 2 of 3 left vs 3 of 4 left
    expect(first.statuses[0]?.limitRemaining).toBe(2);
    const { clock } = engineForClock;
    clock.advance(1000);
    await engine.shouldRateLimit(query("api", [desc("plan=p")], 2));
    clock.advance(1000);
    const r = await engine.shouldRateLimit(query("api", [desc("plan=p")], 2)); // burst has 3, hourly 1
    expect(r.overallCode).toBe("OVER_LIMIT");
    expect(r.statuses[0]?.currentLimit?.name).toBe("hourly"); // the hourly bucket is the one out of tokens
    expect(r.statuses[0]?.durationUntilResetSec).toBeGreaterThan(60);
  });

  it("denies quota_mode descriptors only when every one of them is over", async () => {
    const { engine } = engineFor(RULES);
    await engine.shouldRateLimit(query("api", [desc("quota_a=1")]));
    const one = await engine.shouldRateLimit(query("api", [desc("quota_a=1"), desc("quota_b=1")]));
    expect(one.overallCode).toBe("OK");
    expect(one.statuses[0]?.code).toBe("OVER_LIMIT");
    const both = await engine.shouldRateLimit(query("api", [desc("quota_a=1"), desc("quota_b=1")]));
    expect(both.overallCode).toBe("OVER_LIMIT");
  });
});

describe("request-supplied overrides", () => {
  it("count in their own bucket, never in the configured limit's", async () => {
    const { engine } = engineFor(
      "domain: o\ndescriptors:\n  - key: user\n    rate_limit: { unit: second, requests_per_unit: 10 }\n",
    );
    const override = desc("user=u", { limit: { requestsPerUnit: 1, unit: "hour" } });
    expect((await engine.shouldRateLimit(query("o", [override]))).overallCode).toBe("OK");
    expect((await engine.shouldRateLimit(query("o", [override]))).overallCode).toBe("OVER_LIMIT");
    const configured = await engine.shouldRateLimit(query("o", [desc("user=u")]));
    expect(configured.overallCode).toBe("OK");
    expect(configured.statuses[0]?.limitRemaining).toBe(9);
  });
});
