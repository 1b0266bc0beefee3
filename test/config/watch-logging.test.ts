import { rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { startTestApp, type TestApp, tempDir, tenantRule, writeAtomic } from "./watch-fixture.js";

let t: TestApp | undefined;
let dir: string | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe("logs at info", () => {
  it("write no line per request, however many requests (allowed or denied) arrive", async () => {
    dir = await tempDir();
    await writeFile(join(dir, "edge.yaml"), tenantRule(50));
    t = await startTestApp(join(dir, "edge.yaml"), ["--log-level", "info", "--reload-poll", "0s"]);
    const before = t.logs.length;
    const body = (tenant: string) =>
      JSON.stringify({ domain: "edge", descriptors: [{ entries: [{ key: "tenant", value: tenant }] }] });
    const codes = new Set<number>();
    for (let i = 0; i < 200; i++) {
      const res = await t.http("/json", { method: "POST", body: body(i % 2 === 0 ? "hot" : `t${i}`) });
      codes.add(res.status);
    }
    await t.http("/v1/quota?domain=edge&descriptor=tenant=hot");
    await t.http("/rlconfig");
    expect(codes).toEqual(new Set([200, 429]));
    expect(t.logs.slice(before)).toEqual([]);
  });

  it("log each reload attempt once: a success with its context, a failure with file, line and path", async () => {
    dir = await tempDir();
    const file = join(dir, "edge.yaml");
    await writeFile(file, tenantRule(1));
    t = await startTestApp(file, ["--reload-poll", "0s"]);
    const app = t;
    expect(app.logs.filter((l) => l.msg === "config loaded")).toMatchObject([
      { domains: 1, files: 1, tenants: 0 },
    ]);

    await writeAtomic(file, "domain: edge\ndescriptors:\n  - value: x\n");
    await vi.waitFor(() => expect(app.app.lastReload()?.ok).toBe(false), { timeout: 5_000, interval: 20 });
    await app.app.reload();
    const failed = app.logs.filter((l) => l.level === 50);
    expect(failed).toHaveLength(2);
    expect(failed[0]).toMatchObject({
      msg: "config reload failed; keeping the previous rules",
      problems: [`${file}:3:5: descriptors[0]: missing required key "key"`],
    });
  });
});
