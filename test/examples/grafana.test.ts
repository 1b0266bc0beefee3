import { readFile } from "node:fs/promises";
import { join } from "node:path";
import type { JsonObject } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { asArray, asObject, at, repo } from "./files.js";
import { definedNames, metricNames } from "./promql.js";

/**
 * Envoy's ratelimit filter counters as its `/stats/prometheus` exports them: the stats
 * `cluster.<route target cluster>.ratelimit.{ok,over_limit,error,failure_mode_allowed}` (Envoy's
 * HTTP rate limit filter docs), with `cluster.<name>.` extracted into the `envoy_cluster_name` label.
 */
const ENVOY_RATELIMIT = new Set([
  "envoy_cluster_ratelimit_ok",
  "envoy_cluster_ratelimit_over_limit",
  "envoy_cluster_ratelimit_error",
  "envoy_cluster_ratelimit_failure_mode_allowed",
]);

async function dashboard(): Promise<JsonObject> {
  return asObject(JSON.parse(await readFile(join(repo, "envoy/grafana/tollgate.json"), "utf8")), "dashboard");
}

function exprs(d: JsonObject): string[] {
  return asArray(at(d, "panels"), "panels")
    .map((p) => asObject(p, "panel"))
    .flatMap((p) => (p.targets === undefined ? [] : asArray(p.targets, "targets")))
    .map((t) => String(at(t, "expr")));
}

describe("envoy/grafana/tollgate.json", () => {
  it("is a dashboard with a stable uid and a Prometheus datasource variable", async () => {
    const d = await dashboard();
    expect(at(d, "uid")).toBe("tollgate");
    const vars = asArray(at(d, "templating", "list"), "list");
    expect(vars.map((v) => at(v, "type"))).toContain("datasource");
  });

  it("queries only metrics that src/metrics defines", async () => {
    const defined = await definedNames();
    const all = exprs(await dashboard());
    expect(all.length).toBeGreaterThan(10);
    const unknown = all.flatMap((e) =>
      [...metricNames(e)]
        .filter((n) => !defined.has(n) && !ENVOY_RATELIMIT.has(n))
        .map((n) => `${n} in ${e}`),
    );
    expect(unknown).toEqual([]);
  });

  it("charts every alert's signal: deny ratio, store errors, p99 decision time, degraded, reloads", async () => {
    const used = new Set(exprs(await dashboard()).flatMap((e) => [...metricNames(e)]));
    for (const m of [
      "tollgate_decisions_total",
      "tollgate_store_errors_total",
      "tollgate_decision_duration_seconds_bucket",
      "tollgate_degraded",
      "tollgate_config_reloads_total",
    ]) {
      expect(used).toContain(m);
    }
  });

  it("has job, instance and domain variables, and scopes every tollgate query by them", async () => {
    const d = await dashboard();
    const names = asArray(at(d, "templating", "list"), "list").map((v) => at(v, "name"));
    for (const v of ["datasource", "job", "instance", "domain", "envoy_job"]) expect(names).toContain(v);
    for (const e of exprs(d)) {
      for (const m of e.matchAll(/\b(tollgate_\w+)(\{[^}]*\})?/g)) {
        expect(m[2] ?? "", e).toContain('job=~"$job"');
        expect(m[2] ?? "", e).toContain('instance=~"$instance"');
        if (m[1] === "tollgate_decisions_total") expect(m[2], e).toContain('domain=~"$domain"');
      }
    }
  });

  it("draws Envoy's 20 ms budget as a line on the decision time panel", async () => {
    const panels = asArray(at(await dashboard(), "panels"), "panels").map((p) => asObject(p, "panel"));
    const time = panels.find((p) =>
      exprs({ panels: [p] }).some((e) => e.includes("tollgate_decision_duration_seconds_bucket")),
    );
    expect(at(time, "fieldConfig", "defaults", "custom", "thresholdsStyle", "mode")).toBe("line");
    const steps = asArray(at(time, "fieldConfig", "defaults", "thresholds", "steps"), "steps");
    expect(steps.map((st) => asObject(st, "step").value)).toContain(0.02);
  });

  it("has an Envoy row with over-limit, error and failure_mode_allowed, a build panel and a top-k rules panel", async () => {
    const all = exprs(await dashboard());
    const used = new Set(all.flatMap((e) => [...metricNames(e)]));
    for (const n of ENVOY_RATELIMIT) expect(used).toContain(n);
    expect(used).toContain("tollgate_build_info");
    expect(all.some((e) => /^topk\(10, sum by \(domain, rule\).*result="over_limit"/.test(e))).toBe(true);
  });

  it("gives every panel a unique id and a grid position", async () => {
    const panels = asArray(at(await dashboard(), "panels"), "panels").map((p) => asObject(p, "panel"));
    const ids = panels.map((p) => at(p, "id"));
    expect(new Set(ids).size).toBe(ids.length);
    for (const p of panels)
      expect(Object.keys(asObject(at(p, "gridPos"), "gridPos")).sort()).toEqual(["h", "w", "x", "y"]);
  });
});
