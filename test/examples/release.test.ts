import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { TollgateMetrics } from "../../src/metrics/metrics.js";
import { runCli } from "../helpers/service.js";
import { readDockerfile } from "./dockerfile.js";
import { repo } from "./files.js";

const version = (JSON.parse(readFileSync(join(repo, "package.json"), "utf8")) as { version: string }).version;
const changelog = readFileSync(join(repo, "CHANGELOG.md"), "utf8");
const SECTIONS = new Set(["Added", "Changed", "Deprecated", "Removed", "Fixed", "Security"]);

/** The `## [x.y.z] - YYYY-MM-DD` release headings of CHANGELOG.md, newest first. */
function releases(text: string): { version: string; date: string }[] {
  return [...text.matchAll(/^## \[(\d+\.\d+\.\d+[^\]]*)\] - (\d{4}-\d{2}-\d{2})$/gm)].map((m) => ({
    version: m[1] ?? "",
    date: m[2] ?? "",
  }));
}

describe("the release version", () => {
  it("is package.json's in --version, tollgate_build_info, the image label and the CHANGELOG's latest entry", async () => {
    const cli = await runCli(["--version"]);
    expect(cli.stdout.trim()).toBe(`tollgate ${version}`);
    const info = (await new TollgateMetrics({ processMetrics: false }).registry.getMetricsAsJSON()).find(
      (m) => m.name === "tollgate_build_info",
    );
    expect(info?.values[0]?.labels.version).toBe(version);
    expect(readDockerfile().args.get("VERSION")).toBe(version);
    expect(releases(changelog)[0]?.version).toBe(version);
  });
});

describe("CHANGELOG.md", () => {
  it("follows Keep a Changelog: an Unreleased section first, then dated releases, newest first", () => {
    const headings = [...changelog.matchAll(/^## (.*)$/gm)].map((m) => m[1]);
    expect(headings[0]).toBe("[Unreleased]");
    const dated = releases(changelog);
    expect(dated.length).toBe(headings.length - 1);
    const dates = dated.map((r) => r.date);
    expect([...dates].sort().reverse()).toEqual(dates);
  });

  it("groups changes only under Keep a Changelog's section names", () => {
    const sections = [...changelog.matchAll(/^### (.*)$/gm)].map((m) => m[1] ?? "");
    expect(sections.length).toBeGreaterThan(0);
    expect(sections.filter((s) => !SECTIONS.has(s))).toEqual([]);
  });

  it("reads a release heading and rejects other headings", () => {
    expect(releases("## [1.2.3] - 2026-01-02\n## [x] - 2026-01-02\n## [1.0.0]\n")).toEqual([
      { version: "1.2.3", date: "2026-01-02" },
    ]);
  });
});
