import { describe, expect, it } from "vitest";
import { compileText, EDGE, problemsOf } from "../../helpers/tiers-fixture.js";

describe("tiers section", () => {
  it("compiles limits per tier and route_class, with a fallback for the other classes", () => {
    const table = compileText(EDGE).tiers.tables.get("edge");
    expect(table?.defaultTier).toBe("free");
    expect(table?.tenantKey).toBe("tenant");
    expect(table?.classKey).toBe("route_class");
    const free = table?.tiers.get("free");
    expect(free?.byClass.get("read")?.limits[0]?.requestsPerUnit).toBe(10);
    expect(free?.fallback?.path).toBe("edge.tiers.free");
    const gold = table?.tiers.get("gold");
    expect(gold?.byClass.get("read")?.path).toBe("edge.tiers.gold.route_class_read");
    expect(gold?.byClass.get("read")?.limits.map((l) => l.name)).toEqual([undefined, "daily"]);
    expect(gold?.byClass.get("write")?.limits[0]?.policy).toEqual({
      algorithm: "gcra",
      limit: 50,
      periodMs: 60_000,
      burst: 60,
    });
    expect(gold?.fallback).toBeUndefined();
  });

  it("takes custom tenant and route_class keys", () => {
    const yaml = EDGE.replace(
      "  default_tier: free",
      "  default_tier: free\n  tenant_key: org\n  route_class_key: cls",
    );
    const table = compileText(yaml).tiers.tables.get("edge");
    expect([table?.tenantKey, table?.classKey]).toEqual(["org", "cls"]);
  });

  it("reports a default tier that names no tier, with file, line and path", () => {
    expect(problemsOf(EDGE.replace("default_tier: free", "default_tier: silver"))).toEqual([
      'tiers.yaml:3:17: tiers.default_tier: names no tier of this section ("silver"; defined: free, gold)',
    ]);
  });

  it("reports duplicate tiers and duplicate route classes", () => {
    const yaml = `domain: edge
tiers:
  default_tier: a
  tiers:
    - name: a
      limits:
        - route_class: read
          rate_limit: { unit: minute, requests_per_unit: 1 }
        - route_class: read
          rate_limit: { unit: minute, requests_per_unit: 2 }
        - rate_limit: { unit: minute, requests_per_unit: 3 }
        - rate_limit: { unit: minute, requests_per_unit: 4 }
    - name: a
      limits:
        - rate_limit: { unit: minute, requests_per_unit: 1 }
`;
    expect(problemsOf(yaml)).toEqual([
      'tiers.yaml:9:24: tiers.tiers[0].limits[1].route_class: duplicate route_class "read" (first at line 7)',
      "tiers.yaml:12:11: tiers.tiers[0].limits[3]: duplicate limit without route_class (first at line 11)",
      'tiers.yaml:13:13: tiers.tiers[1].name: duplicate tier "a" (first at line 5)',
    ]);
  });

  it("reports a limit with neither or both of rate_limit and rate_limits, and incomplete limits", () => {
    const yaml = `domain: edge
tiers:
  default_tier: a
  tiers:
    - name: a
      limits:
        - route_class: read
        - route_class: write
          rate_limit: { unit: minute, requests_per_unit: 1 }
          rate_limits: [{ unit: minute, requests_per_unit: 1 }]
        - route_class: list
          rate_limit: { unit: minute }
        - route_class: scan
          rate_limit: { unit: minute, requests_per_unit: 1, algorithm: fixed_window, burst: 3 }
`;
    expect(problemsOf(yaml)).toEqual([
      'tiers.yaml:7:11: tiers.tiers[0].limits[0]: needs "rate_limit" or "rate_limits"',
      'tiers.yaml:10:24: tiers.tiers[0].limits[1].rate_limits: cannot be used together with "rate_limit" (put every limit in rate_limits)',
      'tiers.yaml:12:23: tiers.tiers[0].limits[2].rate_limit: missing required key "requests_per_unit"',
      "tiers.yaml:14:93: tiers.tiers[0].limits[3].rate_limit.burst: is not allowed with algorithm fixed_window (a window admits requests_per_unit)",
    ]);
  });

  it("rejects unknown keys through the schema, with a suggestion", () => {
    expect(problemsOf(EDGE.replace("default_tier: free", "default_tier: free\n  tenantkey: org"))).toEqual([
      'tiers.yaml:4:3: tiers.tenantkey: unknown key "tenantkey" (did you mean "tenant_key"?)',
    ]);
  });

  it("requires default_tier and tiers", () => {
    expect(problemsOf("domain: edge\ntiers: {}\n")).toEqual([
      'tiers.yaml:2:8: tiers: missing required key "default_tier"',
      'tiers.yaml:2:8: tiers: missing required key "tiers"',
    ]);
  });
});
