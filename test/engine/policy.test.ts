import { describe, expect, it } from "vitest";
import { Planner } from "../../src/engine/plan.js";
import { policyOf, ruleLimitOf } from "../../src/engine/policy.js";
import { compileText } from "../helpers/tiers-fixture.js";

describe("policyOf: the one Policy of a limit as written", () => {
  it("gives GCRA its burst (default requests_per_unit) and fixed windows requests_per_unit", () => {
    expect(policyOf({ algorithm: "gcra", requestsPerUnit: 10, unit: "minute", burst: 25 })).toEqual({
      algorithm: "gcra",
      limit: 10,
      periodMs: 60_000,
      burst: 25,
    });
    expect(policyOf({ algorithm: "gcra", requestsPerUnit: 10, unit: "second" }).burst).toBe(10);
    expect(policyOf({ algorithm: "fixed_window", requestsPerUnit: 7, unit: "hour", burst: 99 })).toEqual({
      algorithm: "fixed_window",
      limit: 7,
      periodMs: 3_600_000,
      burst: 7,
    });
    const limit = ruleLimitOf({ name: "n", algorithm: "gcra", requestsPerUnit: 0, unit: "day" });
    expect(Object.isFrozen(limit) && Object.isFrozen(limit.policy)).toBe(true);
    expect(limit.policy.limit).toBe(0);
  });

  it("carries an overdraft rule's maxDebt (also on calendar windows) and nothing for ordinary limits", () => {
    expect(policyOf({ algorithm: "gcra", requestsPerUnit: 10, unit: "minute", maxDebt: 100 })).toEqual({
      algorithm: "gcra",
      limit: 10,
      periodMs: 60_000,
      burst: 10,
      maxDebt: 100,
    });
    const calendar = { timeZone: "UTC" };
    const month = policyOf({
      algorithm: "fixed_window",
      requestsPerUnit: 5,
      unit: "month",
      calendar,
      maxDebt: 0,
    });
    expect(month.maxDebt).toBe(0);
    expect(month.calendar).toEqual({ unit: "month", timeZone: "UTC" });
    expect("maxDebt" in policyOf({ algorithm: "gcra", requestsPerUnit: 10, unit: "minute" })).toBe(false);
    const yaml = `domain: ai
descriptors:
  - key: budget
    overdraft: true
    max_debt: 500
    rate_limit: { unit: minute, requests_per_unit: 100 }
`;
    const rule = compileText(yaml).ruleSet.domains.get("ai")?.root.byKey.get("budget")?.fallback?.rule;
    expect(rule?.limits[0]?.policy).toEqual(
      policyOf({ algorithm: "gcra", requestsPerUnit: 100, unit: "minute", maxDebt: 500 }),
    );
  });

  it("is what descriptors, tiers and request overrides get for the same terms", () => {
    const yaml = `domain: edge
descriptors:
  - key: ip
    rate_limit: { unit: minute, requests_per_unit: 50, burst: 60 }
tiers:
  default_tier: free
  tiers:
    - name: free
      limits:
        - rate_limit: { unit: minute, requests_per_unit: 50, burst: 60 }
`;
    const expected = policyOf({ algorithm: "gcra", requestsPerUnit: 50, unit: "minute", burst: 60 });
    const compiled = compileText(yaml);
    const domain = compiled.ruleSet.domains.get("edge");
    const descriptor = domain?.root.byKey.get("ip")?.fallback?.rule?.limits[0]?.policy;
    const tier = compiled.tiers.tables.get("edge")?.tiers.get("free")?.fallback?.limits[0]?.policy;
    expect(descriptor).toEqual(expected);
    expect(tier).toEqual(expected);
    if (domain === undefined) throw new Error("no domain");
    const [plan] = new Planner({ keyPrefix: "", defaultAlgorithm: "gcra" }).plan(
      domain,
      [
        {
          entries: [{ key: "ip", value: "1" }],
          limit: { requestsPerUnit: 50, unit: "minute" },
          hitsAddend: undefined,
        },
      ],
      1,
    );
    const override = plan?.kind === "limited" ? plan.limits[0]?.policies[0] : undefined;
    expect(override).toEqual(policyOf({ algorithm: "gcra", requestsPerUnit: 50, unit: "minute" }));
    expect(Object.isFrozen(override)).toBe(true);
  });
});
