import { readFileSync } from "node:fs";
import { AggregatorRegistry } from "prom-client";
import { describe, expect, it } from "vitest";
import { TollgateMetrics } from "../../src/metrics/metrics.js";

const packageVersion = (
  JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version: string }
).version;

async function buildInfo(registryJson: Awaited<ReturnType<TollgateMetrics["registry"]["getMetricsAsJSON"]>>) {
  return registryJson.find((m) => m.name === "tollgate_build_info")?.values ?? [];
}

describe("tollgate_build_info", () => {
  it("is 1 with the package version, the Node.js version and the gRPC transport as labels", async () => {
    const m = new TollgateMetrics({ processMetrics: false, transport: "node" });
    expect(await buildInfo(await m.registry.getMetricsAsJSON())).toEqual([
      {
        value: 1,
        labels: { version: packageVersion, node_version: process.versions.node, transport: "node" },
      },
    ]);
    expect(await m.text()).toContain(
      `tollgate_build_info{version="${packageVersion}",node_version="${process.versions.node}",transport="node"} 1`,
    );
  });

  it("names the default transport when none is given", async () => {
    const [series] = await buildInfo(
      await new TollgateMetrics({ processMetrics: false }).registry.getMetricsAsJSON(),
    );
    expect(series?.labels.transport).toBe("tollgate");
  });

  it("stays 1 in the aggregate of several workers instead of counting them", async () => {
    const workers = [0, 1, 2].map(
      (slot) =>
        new TollgateMetrics({ processMetrics: false, worker: { slot: String(slot), pid: 100 + slot } }),
    );
    const merged = AggregatorRegistry.aggregate(
      await Promise.all(workers.map((w) => w.registry.getMetricsAsJSON())),
    );
    const values = await buildInfo(await merged.getMetricsAsJSON());
    expect(values.map((v) => v.value)).toEqual([1]);
  });
});
