import { readFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { ALERTS, PROMETHEUS_RULE, renderPrometheusRule } from "../../scripts/prometheus-rule.mjs";
import { at, repo } from "./files.js";
import { one } from "./kubernetes.js";
import { kubectl, labelsMatch, list, objects, renderOverlays } from "./overlays.js";

beforeAll(renderOverlays, 60_000);

describe("deploy/kubernetes with the Prometheus Operator", () => {
  it("commits the PrometheusRule that scripts/prometheus-rule.mjs renders from the alert rules (npm run gen:deploy)", () => {
    const committed = readFileSync(join(repo, PROMETHEUS_RULE), "utf8");
    expect(committed).toBe(renderPrometheusRule(readFileSync(join(repo, ALERTS), "utf8")));
    expect(at(parse(committed), "spec", "groups")).toEqual(
      at(parse(readFileSync(join(repo, ALERTS), "utf8")), "groups"),
    );
  });

  it("would notice an alert rule changed without regenerating", () => {
    const changed = readFileSync(join(repo, ALERTS), "utf8").replace("> 0.2", "> 0.3");
    expect(renderPrometheusRule(changed)).not.toBe(readFileSync(join(repo, PROMETHEUS_RULE), "utf8"));
  });

  it.skipIf(!kubectl)("scrapes the Service's http port at /metrics", () => {
    const objs = objects("prometheus-operator");
    const service = one(objs, "Service", "tollgate");
    const monitor = one(objs, "ServiceMonitor");
    expect(
      labelsMatch(at(monitor, "spec", "selector", "matchLabels"), at(service, "metadata", "labels")),
    ).toBe(true);
    const port = String(at(monitor, "spec", "endpoints", 0, "port"));
    expect(list(at(service, "spec", "ports")).map((p) => p.name)).toContain(port);
    expect(at(monitor, "spec", "endpoints", 0, "path")).toBe("/metrics");
    expect(one(objs, "PrometheusRule")).toBeDefined();
  });
});
