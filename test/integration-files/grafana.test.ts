import { readFile } from "node:fs/promises";
import { join } from "node:path";
import type { JsonObject } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { asArray, asObject, at, repo } from "./files.js";
import { definedNames, metricNames } from "./promql.js";

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
      [...metricNames(e)].filter((n) => !defined.has(n)).map((n) => `${n} in ${e}`),
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

  it("gives every panel a unique id and a grid position", async () => {
    const panels = asArray(at(await dashboard(), "panels"), "panels").map((p) => asObject(p, "panel"));
    const ids = panels.map((p) => at(p, "id"));
    expect(new Set(ids).size).toBe(ids.length);
    for (const p of panels)
      expect(Object.keys(asObject(at(p, "gridPos"), "gridPos")).sort()).toEqual(["h", "w", "x", "y"]);
  });
});
