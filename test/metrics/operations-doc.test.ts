import { readFile } from "node:fs/promises";
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { TollgateMetrics } from "../../src/metrics/metrics.js";

const DOC = resolve(import.meta.dirname, "../../docs/operations.md");

describe("docs/operations.md metric table", () => {
  it("documents every tollgate metric and names no metric that does not exist", async () => {
    const doc = await readFile(DOC, "utf8");
    const table = doc.slice(doc.indexOf("## Metrics"), doc.indexOf("## Alerts"));
    const rows = table.split("\n").filter((l) => l.startsWith("| `tollgate_"));
    const documented = new Set(
      rows.flatMap((r) => [...(r.split(" | ")[0] ?? "").matchAll(/`(tollgate_\w+)`/g)].map((m) => m[1])),
    );
    const defined = (await new TollgateMetrics({ processMetrics: false }).registry.getMetricsAsJSON()).map(
      (m) => m.name,
    );
    expect([...documented].sort()).toEqual([...defined].sort());
  });
});
