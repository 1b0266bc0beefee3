import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ConfigError, formatProblem } from "../../src/config/errors.js";
import { loadTenants, MAX_PROBLEMS, parseTenantsCsv, parseTenantsYaml } from "../../src/config/tenants.js";

const opts = { knownTiers: new Set(["free", "gold"]) };

function problems(run: () => unknown): string[] {
  try {
    run();
  } catch (err) {
    if (err instanceof ConfigError) return err.problems.map(formatProblem);
    throw err;
  }
  throw new Error("expected problems");
}

describe("tenants file", () => {
  it("reads CSV rows, skipping a header, comments and blank lines, trimming fields", () => {
    const csv = "tenant,tier\n# vip list\n acme , gold\n\nglobex,free\r\n";
    expect([...parseTenantsCsv("t.csv", csv, opts)]).toEqual([
      ["acme", "gold"],
      ["globex", "free"],
    ]);
  });

  it("reports every bad CSV row with its line", () => {
    const csv = "acme,gold\nacme,free\nbad row\ninitech,platinum\n,gold\na,b,c\n";
    expect(problems(() => parseTenantsCsv("t.csv", csv, opts))).toEqual([
      't.csv:2:1: duplicate tenant "acme" (listed earlier)',
      't.csv:3:1: expected "tenant,tier", got "bad row"',
      't.csv:4:1: tenant "initech": unknown tier "platinum" (defined: free, gold)',
      "t.csv:5:1: empty tenant",
      't.csv:6:1: expected "tenant,tier", got "a,b,c"',
    ]);
  });

  it("caps the problems it lists and counts the rest", () => {
    const csv = Array.from({ length: MAX_PROBLEMS + 7 }, (_, i) => `t${i},nope`).join("\n");
    const listed = problems(() => parseTenantsCsv("t.csv", csv, opts));
    expect(listed).toHaveLength(MAX_PROBLEMS + 1);
    expect(listed.at(-1)).toBe("t.csv: … and 7 more problem(s)");
  });

  it("reads a YAML map of tenant: tier and reports bad entries with their line", () => {
    expect([...parseTenantsYaml("t.yaml", "acme: gold\n'007': free\n", opts)]).toEqual([
      ["acme", "gold"],
      ["007", "free"],
    ]);
    expect(
      problems(() => parseTenantsYaml("t.yaml", "acme: gold\nbeta: [x]\ngamma: silver\n", opts)),
    ).toEqual([
      "t.yaml:2:1: each entry must be tenant: tier (two scalars)",
      't.yaml:3:1: tenant "gamma": unknown tier "silver" (defined: free, gold)',
    ]);
    expect(problems(() => parseTenantsYaml("t.yaml", "- acme\n", opts))).toEqual([
      "t.yaml:1:1: must be a map of tenant: tier",
    ]);
  });

  it("chooses the format by extension and names an unreadable or unknown file", async () => {
    const dir = await mkdtemp(join(tmpdir(), "tollgate-tenants-"));
    try {
      await writeFile(join(dir, "t.yml"), "acme: gold\n");
      await writeFile(join(dir, "t.txt"), "acme,gold\n");
      expect((await loadTenants(join(dir, "t.yml"), opts)).get("acme")).toBe("gold");
      await expect(loadTenants(join(dir, "t.txt"), opts)).rejects.toThrow(
        /must end in \.csv, \.yaml or \.yml/,
      );
      await expect(loadTenants(join(dir, "missing.csv"), opts)).rejects.toThrow(/cannot read: ENOENT/);
    } finally {
      await rm(dir, { recursive: true });
    }
  });

  it("loads 200,000 CSV rows and shares one string per tier", () => {
    const rows = Array.from({ length: 200_000 }, (_, i) => `tenant-${i},${i % 10 === 0 ? "gold" : "free"}`);
    const map = parseTenantsCsv("big.csv", rows.join("\n"), opts);
    expect(map.size).toBe(200_000);
    expect(map.get("tenant-199990")).toBe("gold");
    expect(map.get("tenant-199999")).toBe("free");
  });
});
