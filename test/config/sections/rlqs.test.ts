/** The `rlqs` config section: validation with file:line:path errors, defaults, and bucket resolution. */
import { describe, expect, it } from "vitest";
import { parseConfigText } from "../../../src/config/document.js";
import { ConfigError, type ConfigProblem, formatProblem } from "../../../src/config/errors.js";
import { FULL_SCHEMA } from "../../../src/config/full-schema.js";
import { compileRlqs, describeRlqs } from "../../../src/config/sections/rlqs.js";
import { compileTiers } from "../../../src/config/sections/tiers.js";
import { BucketIdError, bucketEntries, resolveBucket } from "../../../src/engine/rlqs/resolve.js";
import type { Tiers } from "../../../src/engine/tiers.js";

function compile(yaml: string, tenants: ReadonlyMap<string, string> = new Map()) {
  const load = parseConfigText("edge.yaml", yaml, { schema: FULL_SCHEMA });
  const problems: ConfigProblem[] = [];
  const rlqs = compileRlqs(load.documents, problems);
  const tables = compileTiers(load.documents, problems);
  if (problems.length > 0) throw new ConfigError(problems);
  const tiers: Tiers = { tables, tenants };
  return { rlqs, rules: load.ruleSet, tiers };
}

function problemsOf(yaml: string): string[] {
  try {
    compile(yaml);
  } catch (err) {
    if (err instanceof ConfigError) return err.problems.map(formatProblem);
    throw err;
  }
  throw new Error("expected the config to be invalid");
}

const EDGE = `domain: edge
rlqs:
  keys:
    - key: tenant
    - key: route_class
      required: false
  assignment_ttl: 6s
  reporting_interval: 500ms
descriptors:
  - key: tenant
    value: free
    rate_limit: { unit: second, requests_per_unit: 0 }
  - key: tenant
    value: vip
    rate_limit: { unlimited: true }
  - key: tenant
    value: trial
    shadow_mode: true
    rate_limit: { unit: second, requests_per_unit: 5 }
  - key: tenant
    value: internal
  - key: tenant
    descriptors:
      - key: route_class
        rate_limits:
          - { unit: second, requests_per_unit: 100, burst: 150 }
          - { unit: minute, requests_per_unit: 3000 }
    rate_limit: { unit: minute, requests_per_unit: 600 }
`;

describe("rlqs config section", () => {
  it("compiles keys in order with defaults", () => {
    const { rlqs } = compile(EDGE);
    const d = rlqs.get("edge");
    expect(d).toMatchObject({
      keys: [
        { key: "tenant", required: true },
        { key: "route_class", required: false },
      ],
      ttlMs: 6000,
      reportingIntervalMs: 500,
      idleIntervals: 10,
      minShare: 0.1,
      reassignThreshold: 0.1,
    });
    expect(describeRlqs(rlqs)).toEqual([
      "edge.rlqs: keys=tenant,route_class? ttl=6000ms reporting_interval=500ms idle_intervals=10 min_share=10% reassign=10%",
    ]);
  });

  it("reports type problems with file, line, column and YAML path", () => {
    expect(
      problemsOf(`domain: edge
rlqs:
  keys:
    - required: true
  min_share_percent: 101
  bogus: 1
`),
    ).toEqual([
      'edge.yaml:4:7: rlqs.keys[0]: missing required key "key"',
      "edge.yaml:5:22: rlqs.min_share_percent: must be an integer from 0 to 100, got 101",
      expect.stringMatching(/^edge\.yaml:6:3: rlqs\.bogus: unknown key "bogus"/),
    ]);
  });

  it("reports every section problem with file, line, column and YAML path", () => {
    expect(
      problemsOf(`domain: edge
rlqs:
  keys:
    - key: tenant
    - key: tenant
    - key: ""
  assignment_ttl: 1500ms
  reporting_interval: 100ms
`),
    ).toEqual([
      'edge.yaml:5:12: rlqs.keys[1].key: duplicate key "tenant"',
      "edge.yaml:6:12: rlqs.keys[2].key: must not be empty (Envoy refuses empty BucketId keys)",
      "edge.yaml:7:19: rlqs.assignment_ttl: must be whole seconds: Envoy reads only the seconds of a TTL",
      "edge.yaml:8:23: rlqs.reporting_interval: must be more than 100ms, as Envoy requires",
    ]);
  });

  it("requires keys, and a TTL of at least two reporting intervals", () => {
    expect(problemsOf("domain: edge\nrlqs:\n  assignment_ttl: 1s\n")).toEqual([
      'edge.yaml:3:3: rlqs: missing required key "keys"',
    ]);
    expect(problemsOf("domain: edge\nrlqs:\n  keys: [{ key: a }]\n  assignment_ttl: 1s\n")).toEqual([
      "edge.yaml:4:19: rlqs.assignment_ttl: must be at least two reporting intervals (2000ms), so an assignment is renewed before it expires",
    ]);
    expect(problemsOf("domain: edge\nrlqs:\n  keys: []\n")).toEqual([
      "edge.yaml:3:9: rlqs.keys: must list at least one key",
    ]);
  });
});

describe("BucketId → descriptor entries", () => {
  const d = compile(EDGE).rlqs.get("edge");
  if (d === undefined) throw new Error("no edge");
  it("orders pairs by the declared keys, whatever the map order", () => {
    const m = new Map([
      ["route_class", "read"],
      ["tenant", "acme"],
    ]);
    expect(bucketEntries(d, m)).toEqual([
      { key: "tenant", value: "acme" },
      { key: "route_class", value: "read" },
    ]);
    expect(bucketEntries(d, new Map([["tenant", "acme"]]))).toEqual([{ key: "tenant", value: "acme" }]);
  });
  it.each([
    [new Map<string, string>(), "bucket_id has no pairs"],
    [new Map([["route_class", "read"]]), 'bucket_id lacks the required key "tenant"'],
    [new Map([["tenant", ""]]), 'bucket_id key "tenant" has an empty value'],
    [
      new Map([
        ["tenant", "a"],
        ["colour", "red"],
      ]),
      'bucket_id key "colour" is not one of domain "edge"\'s rlqs keys (tenant, route_class)',
    ],
  ])("refuses %o: %s", (m, reason) => {
    expect(() => bucketEntries(d, m)).toThrow(new BucketIdError(reason));
  });
});

describe("resolution through the rule tree", () => {
  const { rlqs, rules, tiers } = compile(EDGE);
  const settings = rlqs.get("edge");
  const domain = rules.domains.get("edge");
  if (settings === undefined) throw new Error("no edge");
  const resolve = (pairs: [string, string][]) =>
    resolveBucket(domain, tiers, bucketEntries(settings, new Map(pairs)));

  it("blocked (0) → DENY_ALL; unlimited, shadow, whitelist and no rule → ALLOW_ALL", () => {
    expect(resolve([["tenant", "free"]]).kind).toBe("deny_all");
    expect(resolve([["tenant", "vip"]])).toMatchObject({ kind: "allow_all", why: "unlimited" });
    expect(resolve([["tenant", "trial"]])).toMatchObject({ kind: "allow_all", why: "shadow" });
    expect(resolve([["tenant", "internal"]])).toMatchObject({ kind: "allow_all", why: "whitelist" });
    expect(
      resolve([
        ["tenant", "vip"],
        ["route_class", "read"],
      ]),
    ).toMatchObject({ kind: "allow_all", why: "no_rule" });
  });

  it("a limited rule shares its most restrictive rate and smallest burst", () => {
    expect(resolve([["tenant", "acme"]])).toMatchObject({
      kind: "limited",
      limit: { ratePerSec: 10, burst: 600 },
    });
    const r = resolve([
      ["tenant", "acme"],
      ["route_class", "read"],
    ]);
    expect(r).toMatchObject({ kind: "limited", limit: { ratePerSec: 50, burst: 150 } });
    if (r.kind === "limited") expect(r.rule.path).toBe("edge.tenant.route_class");
  });

  it("falls back to the domain's tiers section like RLS does", () => {
    const t = compile(
      `domain: edge
rlqs:
  keys: [{ key: tenant }, { key: route_class }]
tiers:
  default_tier: free
  tiers:
    - name: free
      limits:
        - route_class: read
          rate_limit: { unit: second, requests_per_unit: 20 }
    - name: gold
      limits:
        - route_class: read
          rate_limit: { unit: second, requests_per_unit: 200 }
`,
      new Map([["acme", "gold"]]),
    );
    const s = t.rlqs.get("edge");
    if (s === undefined) throw new Error("no edge");
    const r = (tenant: string) =>
      resolveBucket(
        t.rules.domains.get("edge"),
        t.tiers,
        bucketEntries(
          s,
          new Map([
            ["tenant", tenant],
            ["route_class", "read"],
          ]),
        ),
      );
    expect(r("acme")).toMatchObject({ kind: "limited", limit: { ratePerSec: 200 } });
    expect(r("other")).toMatchObject({ kind: "limited", limit: { ratePerSec: 20 } });
  });
});
