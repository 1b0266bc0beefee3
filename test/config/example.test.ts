import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { describeRules } from "../../src/config/describe.js";
import { FULL_SCHEMA } from "../../src/config/full-schema.js";
import { loadConfig } from "../../src/config/load.js";
import { extAuthzRulesOf } from "../../src/config/sections/ext-authz.js";
import { extractDescriptors } from "../../src/engine/extract.js";
import { matchDescriptor } from "../../src/engine/match.js";
import { attrs } from "../helpers/ext-authz-attrs.js";

const CONFIG_DIR = join(import.meta.dirname, "../../config");

describe("the shipped config/ example", () => {
  it("loads and lists its rules", async () => {
    const { ruleSet } = await loadConfig(CONFIG_DIR, { schema: FULL_SCHEMA });
    expect(describeRules(ruleSet)).toEqual([
      "ai.tenant.budget_tokens_per_minute: 100000/minute gcra name=tokens_per_minute overdraft max_debt 2000000",
      "ai.tenant.budget_tokens_per_month: 20000000/month fixed_window calendar Europe/Berlin name=tokens_per_month",
      "edge.generic_key_health: unlimited",
      "edge.remote_address: 600/minute gcra",
      "edge.remote_address_10.0.0.1: 0/minute gcra",
      "edge.tenant.route_class_export: 2/minute gcra name=export shadow",
      "edge.tenant.route_class_read: 100/second burst 200 gcra name=read",
      "edge.tenant.route_class_write: 20/second burst 40 gcra name=write + 50000/day fixed_window name=write_daily on_store_error=deny",
      "edge.tenant_acme.route_class_export: 20/minute gcra name=acme_export",
      "edge.tenant_acme.route_class_read: 2000/second burst 4000 gcra name=acme_read shards=4 lease=50/250ms",
      "edge.tenant_acme.route_class_write: 200/second burst 400 gcra name=acme_write",
      "edge.tenant_internal: whitelisted",
      "edge.tenant_trial-*.route_class: 600/minute gcra name=trial",
      "edge: on_store_error=local",
    ]);
  });

  it("matches tenants to their own, shared or default limits", async () => {
    const edge = (await loadConfig(CONFIG_DIR, { schema: FULL_SCHEMA })).ruleSet.domains.get("edge");
    if (edge === undefined) throw new Error("edge domain missing");
    const match = (tenant: string, routeClass: string) =>
      matchDescriptor(edge, [
        { key: "tenant", value: tenant },
        { key: "route_class", value: routeClass },
      ]);
    expect(match("globex", "read")?.rule?.path).toBe("edge.tenant.route_class_read");
    expect(match("acme", "read")?.rule?.shards).toBe(4);
    expect(match("trial-42", "read")?.bucketEntries[0]).toEqual({ key: "tenant", value: "trial-*" });
    expect(match("trial-42", "read")?.rule?.path).toBe("edge.tenant_trial-*.route_class");
    expect(match("globex", "admin")).toBeUndefined();
  });

  it("answers ext_authz Checks of domain edge with the same descriptors, tenant from x-tenant-id", async () => {
    const load = await loadConfig(CONFIG_DIR, { schema: FULL_SCHEMA });
    const rules = extAuthzRulesOf(load);
    expect(rules.defaultDomain).toBe("edge");
    const extraction = rules.domains.get("edge");
    if (extraction === undefined) throw new Error("no ext_authz section");
    const built = (method: string, path: string) =>
      extractDescriptors(extraction, attrs({ method, path, headers: { "x-tenant-id": "globex" } }));
    const entries = (method: string, path: string) => {
      const b = built(method, path);
      return b.ok ? b.descriptors.map((d) => d.entries.map((e) => `${e.key}=${e.value}`)) : b;
    };
    expect(entries("GET", "/items")).toEqual([["tenant=globex", "route_class=read"]]);
    expect(entries("POST", "/export/x")).toEqual([["tenant=globex", "route_class=export"]]);
    expect(entries("DELETE", "/items/1")).toEqual([["tenant=globex", "route_class=write"]]);
  });
});
