import { execFile } from "node:child_process";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { asArray, asObject, at, repo, yamlFile } from "./files.js";
import { definedNames, metricNames } from "./promql.js";

const run = promisify(execFile);
const RULES = "envoy/prometheus/alerts.yaml";

async function hasPromtool(): Promise<boolean> {
  try {
    await run("promtool", ["--version"]);
    return true;
  } catch {
    return false;
  }
}
// promtool comes from Debian's `prometheus` package (.ci/run installs it); in CI its absence fails.
const promtool = (await hasPromtool()) || process.env.CI !== undefined;
const ALERTS = [
  "TollgateDenyRatioHigh",
  "TollgateDenyRatioAbnormallyLow",
  "TollgateStoreErrors",
  "TollgateDecisionLatencyHigh",
  "TollgateDegraded",
  "TollgateConfigReloadFailing",
];

describe("envoy/prometheus/alerts.yaml", () => {
  it.skipIf(!promtool)("passes promtool check rules (skipped only without promtool outside CI)", async () => {
    const { stdout } = await run("promtool", ["check", "rules", join(repo, RULES)]);
    expect(stdout).toContain(`SUCCESS: ${ALERTS.length} rules found`);
  });

  it.skipIf(!promtool)("passes its promtool unit tests, which fire and hold back every alert", async () => {
    const { stdout } = await run("promtool", [
      "test",
      "rules",
      join(repo, "envoy/prometheus/alerts.test.yaml"),
    ]);
    expect(stdout).toContain("SUCCESS");
  });

  it("has the six operational alerts, each with a severity and a runbook pointer", async () => {
    const rules = asArray(at(await yamlFile(RULES), "groups", 0, "rules"), "rules").map((r) =>
      asObject(r, "rule"),
    );
    expect(rules.map((r) => r.alert)).toEqual(ALERTS);
    for (const r of rules) {
      expect(["warning", "critical"]).toContain(at(r, "labels", "severity"));
      expect(String(at(r, "annotations", "description"))).toContain("docs/operations.md#alerts");
    }
  });

  it("uses only metric names that src/metrics defines", async () => {
    const defined = await definedNames();
    const rules = asArray(at(await yamlFile(RULES), "groups", 0, "rules"), "rules");
    const used = new Set(rules.flatMap((r) => [...metricNames(String(at(r, "expr")))]));
    expect(used.size).toBeGreaterThan(3);
    expect([...used].filter((n) => !defined.has(n))).toEqual([]);
  });

  it("tests every alert in alerts.test.yaml", async () => {
    const text = await readFile(join(repo, "envoy/prometheus/alerts.test.yaml"), "utf8");
    for (const a of ALERTS) expect(text).toContain(`alertname: ${a}\n`);
  });
});

describe("PromQL metric scan", () => {
  it("finds metric names and ignores functions, labels, grouping and ranges", () => {
    const names = metricNames(
      'histogram_quantile(0.99, sum by (le, job) (rate(tollgate_x_bucket{result=~"ok|a_b"}[5m] offset 1h))) / on (job) tollgate_y and up',
    );
    expect([...names].sort()).toEqual(["tollgate_x_bucket", "tollgate_y", "up"]);
  });
});
