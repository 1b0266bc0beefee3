import { rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { startTestApp, type TestApp, tempDir, writeAtomic } from "../config/watch-fixture.js";
import { EDGE } from "../helpers/tiers-fixture.js";

const WAIT = { timeout: 5_000, interval: 20 };
let t: TestApp | undefined;
let dir: string | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
  if (dir) await rm(dir, { recursive: true, force: true });
});

async function peek(app: TestApp, tenant: string) {
  const res = await app.http(`/v1/quota?domain=edge&descriptor=tenant=${tenant},route_class=read`);
  const body = (await res.json()) as { descriptors: { tier?: string; limit: { requestsPerUnit: number } }[] };
  return body.descriptors[0];
}

describe("tiers in the running service", () => {
  it("serves each tenant its tier and reloads the tenants file like the config", async () => {
    dir = await tempDir();
    const tenants = join(dir, "tenants.csv");
    await writeFile(join(dir, "edge.yaml"), EDGE);
    await writeFile(tenants, "tenant,tier\nacme,gold\n");
    t = await startTestApp(join(dir, "edge.yaml"), ["--tenants", tenants, "--reload-poll", "0s"]);
    const app = t;
    expect(await peek(app, "acme")).toMatchObject({ tier: "gold", limit: { requestsPerUnit: 100 } });
    expect(await peek(app, "globex")).toMatchObject({ tier: "free", limit: { requestsPerUnit: 10 } });
    const listing = await app.text("/rlconfig");
    expect(listing).toContain(
      "edge.tiers: default_tier=free tenant_key=tenant route_class_key=route_class tenants=1",
    );
    expect(listing).toContain(
      "edge.tiers.gold.route_class_read: 100/minute gcra + 10000/day gcra name=daily",
    );
    expect(listing).toContain("edge.tiers.gold.route_class_write: 50/minute burst 60 gcra");
    expect(listing).toContain("edge.tiers.free: 2/minute gcra");

    await writeAtomic(tenants, "tenant,tier\nacme,free\nglobex,gold\n");
    await vi.waitFor(async () => expect((await peek(app, "globex"))?.tier).toBe("gold"), WAIT);
    expect(await peek(app, "acme")).toMatchObject({ tier: "free", limit: { requestsPerUnit: 10 } });

    await writeAtomic(tenants, "tenant,tier\nacme,platinum\n");
    await vi.waitFor(() => expect(app.app.lastReload()?.ok).toBe(false), WAIT);
    expect(await app.text("/rlconfig")).toContain(
      `${tenants}:2:1: tenant "acme": unknown tier "platinum" (defined: free, gold)`,
    );
    expect((await peek(app, "globex"))?.tier).toBe("gold");
  });

  it("refuses to start when the tenants file names an undefined tier", async () => {
    dir = await tempDir();
    const tenants = join(dir, "tenants.csv");
    await writeFile(join(dir, "edge.yaml"), EDGE);
    await writeFile(tenants, "acme,bronze\n");
    await expect(startTestApp(join(dir, "edge.yaml"), ["--tenants", tenants])).rejects.toThrow(
      /tenants\.csv:1:1: tenant "acme": unknown tier "bronze"/,
    );
  });
});
