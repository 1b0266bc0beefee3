import { describe, expect, it } from "vitest";
import { parseConfigText } from "../../src/config/document.js";
import { matchDescriptor } from "../../src/engine/match.js";
import type { DomainRules, Entry } from "../../src/engine/types.js";

function domainOf(yaml: string): DomainRules {
  const domain = parseConfigText("test.yaml", yaml).ruleSet.domains.get("d");
  if (domain === undefined) throw new Error("domain d missing");
  return domain;
}

const entries = (...pairs: string[]): Entry[] =>
  pairs.map((p) => {
    const [key = "", value = ""] = p.split("=");
    return { key, value };
  });

const TREE = `
domain: d
descriptors:
  - key: tenant
    rate_limit: { unit: minute, requests_per_unit: 100 }
    descriptors:
      - key: route_class
        value: read
        rate_limit: { unit: second, requests_per_unit: 10 }
      - key: route_class
        value: "exp*t"
        rate_limit: { unit: second, requests_per_unit: 3 }
      - key: route_class
        value: "*"
        share_threshold: true
        rate_limit: { unit: second, requests_per_unit: 2 }
  - key: tenant
    value: acme
    rate_limit: { unit: hour, requests_per_unit: 7 }
  - key: tenant
    value: internal
  - key: path
    value: "/api/*"
    rate_limit: { unit: second, requests_per_unit: 4 }
  - key: path
    value: "/api/v2*"
    rate_limit: { unit: second, requests_per_unit: 5 }
  - key: path
    value: "*/health"
    rate_limit: { unit: second, requests_per_unit: 6 }
  - key: group
    descriptors:
      - key: user
        rate_limit: { unit: day, requests_per_unit: 9 }
`;

describe("matchDescriptor", () => {
  const domain = domainOf(TREE);
  const limitOf = (...pairs: string[]) =>
    matchDescriptor(domain, entries(...pairs))?.rule?.limits[0]?.requestsPerUnit;

  it("prefers the exact key_value node over the value-less default", () => {
    expect(limitOf("tenant=acme")).toBe(7);
    expect(limitOf("tenant=other")).toBe(100);
  });

  it("applies a rule only to a descriptor that ends at its depth", () => {
    expect(limitOf("tenant=other")).toBe(100);
    expect(limitOf("tenant=other", "route_class=read")).toBe(10);
    expect(matchDescriptor(domain, entries("group=g"))).toBeUndefined();
    expect(limitOf("group=g", "user=u")).toBe(9);
  });

  it("matches nothing when the descriptor is longer than the tree", () => {
    expect(matchDescriptor(domain, entries("tenant=acme", "route_class=read"))).toBeUndefined();
    expect(matchDescriptor(domain, entries("group=g", "user=u", "extra=x"))).toBeUndefined();
  });

  it("is greedy per level and never backtracks to the default", () => {
    // tenant=acme matched exactly and has no children, so the default tenant subtree is not tried.
    expect(matchDescriptor(domain, entries("tenant=acme", "route_class=read"))).toBeUndefined();
  });

  it("tries globs after the exact value, in YAML order, with * matching zero or more chars anywhere", () => {
    expect(limitOf("path=/api/v2/users")).toBe(4);
    expect(limitOf("path=/api/")).toBe(4);
    expect(limitOf("path=/svc/health")).toBe(6);
    expect(limitOf("path=/health")).toBe(6);
    expect(matchDescriptor(domain, entries("path=/other"))).toBeUndefined();
    expect(limitOf("tenant=t", "route_class=export")).toBe(3);
    expect(limitOf("tenant=t", "route_class=expt")).toBe(3);
  });

  it("treats regex metacharacters in a glob value literally", () => {
    const d = domainOf(
      `domain: d\ndescriptors:\n  - key: k\n    value: "a.b*"\n    rate_limit: { unit: second, requests_per_unit: 1 }\n`,
    );
    expect(matchDescriptor(d, entries("k=a.bc"))).toBeDefined();
    expect(matchDescriptor(d, entries("k=axbc"))).toBeUndefined();
  });

  it("gives each runtime value of a default entry its own bucket", () => {
    const m = matchDescriptor(domain, entries("tenant=zeta"));
    expect(m?.bucketEntries).toEqual([{ key: "tenant", value: "zeta" }]);
    expect(m?.rule?.path).toBe("d.tenant");
  });

  it("gives each value matched by a glob its own bucket without share_threshold", () => {
    const m = matchDescriptor(domain, entries("path=/api/x"));
    expect(m?.bucketEntries).toEqual([{ key: "path", value: "/api/x" }]);
  });

  it("makes every value matched by a share_threshold glob share one bucket keyed by the pattern", () => {
    const a = matchDescriptor(domain, entries("tenant=t1", "route_class=write"));
    const b = matchDescriptor(domain, entries("tenant=t1", "route_class=delete"));
    expect(a?.rule?.limits[0]?.requestsPerUnit).toBe(2);
    expect(a?.bucketEntries).toEqual([
      { key: "tenant", value: "t1" },
      { key: "route_class", value: "*" },
    ]);
    expect(b?.bucketEntries).toEqual(a?.bucketEntries);
  });

  it("whitelists a value that has neither rate_limit nor children", () => {
    const m = matchDescriptor(domain, entries("tenant=internal"));
    expect(m).toBeDefined();
    expect(m?.rule).toBeUndefined();
    expect(m?.node.whitelist).toBe(true);
  });

  it("matches nothing for an unknown key or an empty descriptor", () => {
    expect(matchDescriptor(domain, entries("nope=x"))).toBeUndefined();
    expect(matchDescriptor(domain, [])).toBeUndefined();
  });

  it("does not confuse keys and values that contain underscores", () => {
    const d = domainOf(
      `domain: d\ndescriptors:\n  - key: a_b\n    value: c\n    rate_limit: { unit: second, requests_per_unit: 1 }\n  - key: a\n    value: b_c\n    rate_limit: { unit: second, requests_per_unit: 2 }\n`,
    );
    expect(matchDescriptor(d, entries("a_b=c"))?.rule?.limits[0]?.requestsPerUnit).toBe(1);
    expect(matchDescriptor(d, entries("a=b_c"))?.rule?.limits[0]?.requestsPerUnit).toBe(2);
  });

  it("returns the runtime entries array itself when no level shares a bucket", () => {
    const e = entries("tenant=t", "route_class=read");
    expect(matchDescriptor(domain, e)?.bucketEntries).toBe(e);
  });
});
