import { describe, expect, it } from "vitest";
import { MAX_DEBT_DAYS } from "../../src/config/debt.js";
import { describeRules } from "../../src/config/describe.js";
import { parseConfigText } from "../../src/config/document.js";
import { matchDescriptor } from "../../src/engine/match.js";
import type { Policy } from "../../src/engine/types.js";

const CONFIG = `
domain: ai
descriptors:
  - key: tenant
    overdraft: true
    rate_limits:
      - { unit: minute, requests_per_unit: 1000, name: per_minute }
      - { unit: year, requests_per_unit: 100000, algorithm: fixed_window }
  - key: team
    overdraft: true
    max_debt: 50000
    rate_limit: { unit: hour, requests_per_unit: 2000 }
  - key: user
    shadow_mode: true
    rate_limit: { unit: minute, requests_per_unit: 10 }
`;

function policies(key: string): Policy[] {
  const domain = parseConfigText("ai.yaml", CONFIG).ruleSet.domains.get("ai");
  if (!domain) throw new Error("domain ai not loaded");
  return matchDescriptor(domain, [{ key, value: "x" }])?.rule?.limits.map((l) => l.policy) ?? [];
}

describe("overdraft rule keys", () => {
  it("overdraft: true gives every limit of the rule a debt bound of 10 × requests_per_unit by default", () => {
    expect(policies("tenant")[0]).toEqual({
      algorithm: "gcra",
      limit: 1000,
      periodMs: 60_000,
      burst: 1000,
      maxDebt: 10_000,
    });
  });

  it(`lowers the default to what the limit repays in ${MAX_DEBT_DAYS} days`, () => {
    // 100,000 per 365-day year: 366 days repay 100,273 hits, less than 10 × 100,000.
    expect(policies("tenant")[1]?.maxDebt).toBe(100_273);
  });

  it("takes an explicit max_debt in hits", () => {
    expect(policies("team")[0]?.maxDebt).toBe(50_000);
  });

  it("leaves the policy of an ordinary rule without a debt bound (no key at all)", () => {
    const [p] = policies("user");
    expect(p).toBeDefined();
    expect(Object.keys(p ?? {})).not.toContain("maxDebt");
  });

  it("lists the bound on /rlconfig", () => {
    const lines = describeRules(parseConfigText("ai.yaml", CONFIG).ruleSet);
    expect(lines).toContain("ai.team: 2000/hour gcra overdraft max_debt 50000");
  });
});
