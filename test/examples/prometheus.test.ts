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
  "TollgateDown",
  "TollgateAbsent",
  "TollgateDenyRatioHigh",
  "TollgateDenyRatioAbnormallyLow",
  "TollgateNoMatchShareHigh",
  "TollgateStoreErrors",
  "TollgateDecisionLatencyHigh",
  "TollgateOverloaded",
  "TollgateDegraded",
  "TollgateConfigReloadFailing",
];

/** Level-2 headings of docs/runbook.md as GitHub anchors, with each section's text. */
async function runbookSections(): Promise<Map<string, string>> {
  const text = await readFile(join(repo, "docs/runbook.md"), "utf8");
  const sections = new Map<string, string>();
  for (const part of text.split(/^## /m).slice(1)) {
    const [title = "", ...body] = part.split("\n");
    sections.set(
      title
        .trim()
        .toLowerCase()
        .replace(/[^a-z0-9 -]/g, "")
        .replace(/ /g, "-"),
      body.join("\n"),
    );
  }
  return sections;
}

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

  it("has the operational alerts, each with a severity, a for: and a runbook section that says what to do", async () => {
    const rules = asArray(at(await yamlFile(RULES), "groups", 0, "rules"), "rules").map((r) =>
      asObject(r, "rule"),
    );
    expect(rules.map((r) => r.alert)).toEqual(ALERTS);
    const sections = await runbookSections();
    expect([...sections.keys()]).toEqual(ALERTS.map((a) => a.toLowerCase()));
    for (const r of rules) {
      expect(["warning", "critical"]).toContain(at(r, "labels", "severity"));
      expect(String(at(r, "for")), String(r.alert)).toMatch(/^\d+[mh]$/);
      const url = String(at(r, "annotations", "runbook_url"));
      expect(url).toBe(`docs/runbook.md#${String(r.alert).toLowerCase()}`);
      const section = sections.get(url.split("#")[1] ?? "") ?? "";
      for (const part of ["**Meaning.**", "**Confirm.**", "**Act.**"]) expect(section).toContain(part);
    }
  });

  it("uses only metric names that src/metrics defines", async () => {
    const defined = await definedNames();
    const rules = asArray(at(await yamlFile(RULES), "groups", 0, "rules"), "rules");
    const used = new Set(rules.flatMap((r) => [...metricNames(String(at(r, "expr")))]));
    expect(used.size).toBeGreaterThan(3);
    // `up` is the series Prometheus itself writes for each scrape.
    expect([...used].filter((n) => !defined.has(n) && n !== "up")).toEqual([]);
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
