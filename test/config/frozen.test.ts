import { describe, expect, it } from "vitest";
import { compileText } from "../helpers/tiers-fixture.js";

const YAML = `domain: edge
on_store_error: allow
descriptors:
  - key: tenant
    shards: 2
    lease: { size: 10, ttl: 1s }
    rate_limits:
      - { unit: second, requests_per_unit: 10, name: s }
      - { unit: minute, requests_per_unit: 100, algorithm: fixed_window }
    descriptors:
      - key: route_class
        value: read
        rate_limit: { unit: second, requests_per_unit: 5, replaces: [{ name: s }] }
      - key: route_class
        value: "adm*"
        share_threshold: true
        rate_limit: { unit: hour, requests_per_unit: 1 }
      - key: route_class
        value: open
  - key: ip
    rate_limit: { unlimited: true }
tiers:
  default_tier: free
  tiers:
    - name: free
      limits:
        - route_class: read
          rate_limit: { unit: minute, requests_per_unit: 7 }
        - rate_limits: [{ unit: minute, requests_per_unit: 3 }]
`;

/** Every object reachable from `root` that is not frozen, by path; Maps are walked (they cannot be frozen). */
function unfrozen(root: unknown): string[] {
  const out: string[] = [];
  const seen = new Set<unknown>();
  const walk = (v: unknown, path: string) => {
    if (typeof v !== "object" || v === null || seen.has(v) || v instanceof RegExp) return;
    seen.add(v);
    if (v instanceof Map) {
      for (const [k, child] of v) walk(child, `${path}[${String(k)}]`);
      return;
    }
    if (!Object.isFrozen(v)) out.push(path);
    for (const [k, child] of Object.entries(v)) walk(child, `${path}.${k}`);
  };
  walk(root, "$");
  return out;
}

describe("compiled config", () => {
  it("is frozen all the way down: rule tree, rules, limits, policies, tiers (Maps are read-only by type)", () => {
    const { ruleSet, tiers } = compileText(YAML);
    expect(unfrozen(ruleSet)).toEqual([]);
    expect(unfrozen(tiers.tables)).toEqual([]);
  });
});
