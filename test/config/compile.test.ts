import { describe, expect, it } from "vitest";
import { describeRules } from "../../src/config/describe.js";
import { parseConfigText } from "../../src/config/document.js";
import { ConfigError } from "../../src/config/errors.js";
import { matchDescriptor } from "../../src/engine/match.js";
import type { DomainRules, Rule } from "../../src/engine/types.js";

const ENVOY_STYLE = `
domain: mongo_cps
descriptors:
  - key: database
    value: users
    rate_limit:
      unit: SECOND
      requests_per_unit: 500
      name: users_cps
  - key: database
    value: default
    shadow_mode: true
    detailed_metric: true
    rate_limit:
      unit: Second
      requests_per_unit: 0
  - key: client
    value: vip
    rate_limit:
      unlimited: true
  - key: remote_address
    value_to_metric: true
    quota_mode: true
    rate_limit:
      unit: hour
      requests_per_unit: 10
      replaces:
        - name: users_cps
    metadata:
      owner: team-a
`;

function rule(domain: DomainRules | undefined, ...pairs: [string, string][]): Rule | undefined {
  if (domain === undefined) return undefined;
  return matchDescriptor(
    domain,
    pairs.map(([key, value]) => ({ key, value })),
  )?.rule;
}

describe("compile", () => {
  it("loads an envoyproxy/ratelimit config unchanged with units in any case", () => {
    const { ruleSet } = parseConfigText("envoy.yaml", ENVOY_STYLE);
    const d = ruleSet.domains.get("mongo_cps");
    const users = rule(d, ["database", "users"]);
    expect(users?.limits).toEqual([
      {
        name: "users_cps",
        unit: "second",
        requestsPerUnit: 500,
        policy: { algorithm: "gcra", limit: 500, periodMs: 1000, burst: 500 },
      },
    ]);
    expect(users?.path).toBe("mongo_cps.database_users");
    expect(users?.source).toEqual({ file: "envoy.yaml", line: 4 });
    const def = rule(d, ["database", "default"]);
    expect(def?.shadowMode).toBe(true);
    expect(def?.detailedMetric).toBe(true);
    expect(def?.limits[0]?.requestsPerUnit).toBe(0);
    const vip = rule(d, ["client", "vip"]);
    expect(vip?.unlimited).toBe(true);
    expect(vip?.limits).toEqual([]);
    const remote = rule(d, ["remote_address", "10.0.0.1"]);
    expect(remote?.replaces).toEqual(["users_cps"]);
    expect(remote?.quotaMode).toBe(true);
    expect(remote?.valueToMetric).toBe(true);
  });

  it("compiles calendar: true into calendar policies of the rule's time zone (UTC by default)", () => {
    const { ruleSet } = parseConfigText(
      "cal.yaml",
      `
domain: d
descriptors:
  - key: tenant
    calendar: true
    time_zone: Europe/Berlin
    rate_limits:
      - { unit: month, requests_per_unit: 1000000, algorithm: fixed_window, name: monthly }
      - { unit: week, requests_per_unit: 300000, algorithm: fixed_window }
  - key: utc
    calendar: true
    rate_limit: { unit: day, requests_per_unit: 5, algorithm: fixed_window }
`,
    );
    const d = ruleSet.domains.get("d");
    expect(rule(d, ["tenant", "t"])?.limits.map((l) => l.policy.calendar)).toEqual([
      { unit: "month", timeZone: "Europe/Berlin" },
      { unit: "week", timeZone: "Europe/Berlin" },
    ]);
    expect(rule(d, ["utc", "x"])?.limits[0]?.policy).toEqual({
      algorithm: "fixed_window",
      limit: 5,
      periodMs: 86_400_000,
      burst: 5,
      calendar: { unit: "day", timeZone: "UTC" },
    });
    expect(describeRules(ruleSet)).toContain(
      "d.tenant: 1000000/month fixed_window calendar Europe/Berlin name=monthly + 300000/week fixed_window calendar Europe/Berlin",
    );
  });

  it("compiles our extensions: algorithm, burst, rate_limits, shards, lease, on_store_error", () => {
    const { ruleSet } = parseConfigText(
      "ext.yaml",
      `
domain: d
on_store_error: deny
descriptors:
  - key: tenant
    on_store_error: allow
    descriptors:
      - key: route
        shards: 4
        lease: { size: 20, ttl: 250ms }
        rate_limits:
          - { unit: second, requests_per_unit: 10, burst: 30, name: per_second, algorithm: gcra }
          - { unit: day, requests_per_unit: 10000, algorithm: fixed_window, name: per_day }
  - key: plain
    rate_limit: { unit: minute, requests_per_unit: 6 }
`,
      { defaultAlgorithm: "fixed_window" },
    );
    const d = ruleSet.domains.get("d");
    expect(d?.onStoreError).toBe("deny");
    const r = rule(d, ["tenant", "t"], ["route", "r"]);
    expect(r?.limits.map((l) => l.policy)).toEqual([
      { algorithm: "gcra", limit: 10, periodMs: 1000, burst: 30 },
      { algorithm: "fixed_window", limit: 10000, periodMs: 86_400_000, burst: 10000 },
    ]);
    expect(r?.shards).toBe(4);
    expect(r?.lease).toEqual({ size: 20, ttlMs: 250 });
    expect(r?.onStoreError).toBe("allow");
    expect(rule(d, ["plain", "x"])?.onStoreError).toBeUndefined();
    expect(rule(d, ["plain", "x"])?.limits[0]?.policy.algorithm).toBe("fixed_window");
  });

  it("reports every problem of a file in one ConfigError, in position order", () => {
    const text = `domain: d
descriptors:
  - key: a
    rate_limit: { unit: minutes, requests_per_unit: 1 }
  - key: b
    shadow: true
    rate_limit: { unit: second, requests_per_unit: -4 }
`;
    const err = (() => {
      try {
        parseConfigText("many.yaml", text);
      } catch (e) {
        return e;
      }
      return undefined;
    })();
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as ConfigError).problems.map((p) => [p.line, p.column, p.path])).toEqual([
      [4, 25, "descriptors[0].rate_limit.unit"],
      [6, 5, "descriptors[1].shadow"],
      [7, 52, "descriptors[1].rate_limit.requests_per_unit"],
    ]);
    expect((err as ConfigError).message).toContain('did you mean "shadow_mode"?');
  });

  it("freezes the compiled rules", () => {
    const { ruleSet } = parseConfigText("envoy.yaml", ENVOY_STYLE);
    const users = rule(ruleSet.domains.get("mongo_cps"), ["database", "users"]);
    expect(Object.isFrozen(ruleSet)).toBe(true);
    expect(Object.isFrozen(users)).toBe(true);
    expect(Object.isFrozen(users?.limits[0]?.policy)).toBe(true);
  });

  it("resolves YAML aliases like the reference parser", () => {
    const { ruleSet } = parseConfigText(
      "alias.yaml",
      `domain: d
descriptors:
  - key: a
    rate_limit: &std { unit: second, requests_per_unit: 3 }
  - key: b
    rate_limit: *std
`,
    );
    expect(rule(ruleSet.domains.get("d"), ["b", "x"])?.limits[0]?.requestsPerUnit).toBe(3);
  });

  it("treats an empty value as a default entry, as the reference does", () => {
    const { ruleSet } = parseConfigText(
      "empty.yaml",
      `domain: d\ndescriptors:\n  - key: a\n    value: ""\n    rate_limit: { unit: second, requests_per_unit: 3 }\n`,
    );
    expect(rule(ruleSet.domains.get("d"), ["a", "anything"])?.path).toBe("d.a");
  });
});

describe("describeRules", () => {
  it("prints one normalized line per rule and whitelisted value, sorted", () => {
    const { ruleSet } = parseConfigText(
      "x.yaml",
      `${ENVOY_STYLE}
  - key: tenant
    value: "team*"
    share_threshold: true
    shards: 2
    rate_limit: { unit: minute, requests_per_unit: 100, burst: 200, name: teams }
  - key: tenant
    value: internal
`,
    );
    expect(describeRules(ruleSet)).toEqual([
      "mongo_cps.client_vip: unlimited",
      "mongo_cps.database_default: 0/second gcra shadow detailed_metric",
      "mongo_cps.database_users: 500/second gcra name=users_cps",
      "mongo_cps.remote_address: 10/hour gcra quota value_to_metric replaces=users_cps",
      "mongo_cps.tenant_internal: whitelisted",
      "mongo_cps.tenant_team*: 100/minute burst 200 gcra name=teams share_threshold shards=2",
    ]);
  });
});
