import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/load.js";
import { loadServingConfig } from "../../src/config/serving.js";
import { CompiledLimit, CompiledPolicy } from "../../src/engine/compiled.js";
import { limitHeaderItems } from "../../src/engine/headers.js";
import { KeyCache } from "../../src/engine/key-cache.js";
import type { DescriptorLevel, Rule } from "../../src/engine/types.js";
import { encodeLimitBody } from "../../src/protocol/response-wire.js";
import { policyArgs } from "../../src/store/redis/resp-bulk.js";
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

/** Getter names of a class instance's prototype chain (the precomputed fields of engine/compiled.ts). */
function getters(v: object): string[] {
  const names: string[] = [];
  for (let proto = Object.getPrototypeOf(v); proto !== null && proto !== Object.prototype; ) {
    for (const [name, d] of Object.entries(Object.getOwnPropertyDescriptors(proto)))
      if (d.get !== undefined) names.push(name);
    proto = Object.getPrototypeOf(proto);
  }
  return names;
}

/**
 * Every object reachable from `root` that is not frozen, by path; Maps and Sets are walked (they cannot
 * be frozen), and so are the getters of class instances (the precomputed bytes and header items). A
 * rule plan's key cache (the one mutable memo of compiled config) is listed in `memos`, not walked.
 */
function unfrozen(root: unknown): { unfrozen: string[]; memos: string[] } {
  const out: string[] = [];
  const memos: string[] = [];
  const seen = new Set<unknown>();
  const walk = (v: unknown, path: string) => {
    if (typeof v !== "object" || v === null || seen.has(v) || v instanceof RegExp) return;
    seen.add(v);
    if (v instanceof KeyCache) {
      memos.push(path);
      return;
    }
    if (v instanceof Map) {
      for (const [k, child] of v) walk(child, `${path}[${String(k)}]`);
      return;
    }
    if (v instanceof Set) {
      for (const child of v) walk(child, `${path}{}`);
      return;
    }
    if (!Object.isFrozen(v)) out.push(path);
    for (const [k, child] of Object.entries(v)) walk(child, `${path}.${k}`);
    for (const name of getters(v)) walk((v as Record<string, unknown>)[name], `${path}.${name}`);
  };
  walk(root, "$");
  return { unfrozen: out, memos };
}

/** Every rule of a level, depth first. */
function rulesOf(level: DescriptorLevel): Rule[] {
  return level.nodes.flatMap((n) => [...(n.rule ? [n.rule] : []), ...rulesOf(n.children)]);
}

describe("compiled config", () => {
  it("is frozen all the way down: rule tree, rules, plans, limits, policies, precomputed bytes, tiers", () => {
    const { ruleSet, tiers } = compileText(YAML);
    const rules = unfrozen(ruleSet);
    const tables = unfrozen(tiers.tables);
    expect(rules.unfrozen).toEqual([]);
    expect(tables.unfrozen).toEqual([]);
    // The key caches are the only mutable objects, one per rule plan.
    const memos = [...rules.memos, ...tables.memos];
    expect(memos.length).toBe(6); // tenant, route_class read and adm*, ip (unlimited); the two tier rules
    for (const path of memos)
      expect(path).toMatch(/\.rule\.plan\.keys$|\.(byClass\[\w+\]|fallback)\.plan\.keys$/);
  });

  it("carries every rule's plan with the bytes and header items its writers would build, unchangeable", () => {
    const { ruleSet, tiers } = compileText(YAML);
    const tierRules = [...tiers.tables.values()].flatMap((t) =>
      [...t.tiers.values()].flatMap((l) => [...l.byClass.values(), ...(l.fallback ? [l.fallback] : [])]),
    );
    const rules = [...rulesOf((ruleSet.domains.get("edge") as { root: DescriptorLevel }).root), ...tierRules];
    const limits = rules.flatMap((r) => r.plan.limits);
    expect(limits.length).toBe(6);
    expect(rules.find((r) => r.plan.shards === 2)?.plan.limits[0]?.policies.length).toBe(2);
    for (const l of limits) {
      const reported = l.reported as CompiledLimit;
      expect(reported).toBeInstanceOf(CompiledLimit);
      const plain = { requestsPerUnit: reported.requestsPerUnit, unit: reported.unit, name: reported.name };
      expect(reported.wire).toBe(encodeLimitBody(plain));
      expect(reported.headers).toEqual(limitHeaderItems(plain));
      expect(() => {
        (reported as unknown as { wire: string }).wire = "";
      }).toThrow(TypeError);
      for (const p of l.policies) {
        expect(p).toBeInstanceOf(CompiledPolicy);
        expect(p.resp).toBe(policyArgs(p));
        expect(() => {
          (p as { limit: number }).limit = 1;
        }).toThrow(TypeError);
      }
    }
    // A spread copies the numbers, never bytes that would no longer match them.
    const policy = limits[0]?.policies[0] as CompiledPolicy;
    expect({ ...policy, limit: 1 }).not.toHaveProperty("resp");
  });
});

describe("the whole serving config", () => {
  // Every section loadServingConfig builds (rules, ext_authz, tiers with a tenants file, rlqs), from
  // the shipped configs plus the tiers fixture above: a new section cannot slip through unfrozen.
  const dir = mkdtempSync(join(tmpdir(), "tollgate-frozen-"));
  writeFileSync(join(dir, "tenants.csv"), "tenant,tier\nacme,free\n");
  writeFileSync(join(dir, "tiers.yaml"), YAML);
  const cases: [string, string, string][] = [
    ["config/ (edge, ai: ext_authz, overdraft, calendar)", "config", ""],
    ["envoy/config-rlqs (rlqs)", "envoy/config-rlqs", ""],
    ["the tiers fixture with a tenants file", join(dir, "tiers.yaml"), join(dir, "tenants.csv")],
  ];
  it.each(cases)("is frozen all the way down: %s", async (_name, path, tenantsPath) => {
    const config = await loadServingConfig((o) => loadConfig(path, o), {
      defaultAlgorithm: "gcra",
      tenantsPath,
      maxKeyValueBytes: 256,
    });
    const sections = Object.freeze({
      rules: config.rules,
      extAuthz: config.extAuthz,
      tiers: config.tiers,
      rlqs: config.rlqs,
    });
    const found = unfrozen(sections);
    expect(found.unfrozen).toEqual([]);
    for (const path of found.memos) expect(path).toMatch(/\.plan\.keys$/);
    expect(Object.isFrozen(config)).toBe(true);
  });

  it("finds an object left unfrozen (the check can fail)", () => {
    expect(
      unfrozen(Object.freeze({ a: Object.freeze({ b: {} }), m: new Map([["k", {}]]) })).unfrozen,
    ).toEqual(["$.a.b", "$.m[k]"]);
  });
});
