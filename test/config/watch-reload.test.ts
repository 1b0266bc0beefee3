import { mkdir, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import {
  makeConfigMap,
  startTestApp,
  swapConfigMap,
  type TestApp,
  tempDir,
  tenantRule,
  writeAtomic,
} from "./watch-fixture.js";

const WAIT = { timeout: 5_000, interval: 20 };
let running: TestApp | undefined;
let dir: string | undefined;

afterEach(async () => {
  await running?.close();
  running = undefined;
  if (dir) await rm(dir, { recursive: true, force: true });
  dir = undefined;
});

async function start(config: string, args: readonly string[] = []): Promise<TestApp> {
  running = await startTestApp(config, args);
  return running;
}

const decideOnce = (t: TestApp) =>
  t.http("/json", {
    method: "POST",
    body: JSON.stringify({ domain: "edge", descriptors: [{ entries: [{ key: "tenant", value: "a" }] }] }),
  });

describe("config hot reload", () => {
  it("serves the new rules after the config file is edited", async () => {
    dir = await tempDir();
    const file = join(dir, "edge.yaml");
    await writeFile(file, tenantRule(5));
    const t = await start(file, ["--reload-poll", "0s"]);
    expect(await t.text("/rlconfig")).toContain("edge.tenant: 5/minute gcra");

    await writeAtomic(file, tenantRule(7));
    await vi.waitFor(async () => expect(await t.text("/rlconfig")).toContain("edge.tenant: 7/minute"), WAIT);
    expect(t.app.lastReload()?.ok).toBe(true);
    const reloaded = t.logs.filter((l) => l.msg === "config reloaded");
    expect(reloaded).toHaveLength(1);
  });

  it("keeps the old rules after an invalid edit and shows the error on /rlconfig and in metrics", async () => {
    dir = await tempDir();
    const file = join(dir, "edge.yaml");
    await writeFile(file, tenantRule(5));
    const t = await start(file, ["--reload-poll", "0s"]);

    await writeAtomic(file, tenantRule(5).replace("unit: minute", "unit: minutes"));
    await vi.waitFor(() => expect(t.app.lastReload()?.ok).toBe(false), WAIT);

    const rlconfig = await t.text("/rlconfig");
    expect(rlconfig).toContain("edge.tenant: 5/minute gcra");
    expect(rlconfig).toContain("# last reload: FAILED, serving the previous rules");
    expect(rlconfig).toContain(`${file}:5:13: descriptors[0].rate_limit.unit: unknown unit "minutes"`);
    const metrics = await t.text("/metrics");
    expect(metrics).toMatch(/tollgate_config_reloads_total\{result="failure"\} 1/);
    const failures = t.logs.filter((l) => l.msg === "config reload failed; keeping the previous rules");
    expect(failures).toHaveLength(1);
    expect(JSON.stringify(failures[0]?.problems)).toContain(`${file}:5:13`);
    expect((await decideOnce(t)).status).toBe(200);

    await writeAtomic(file, tenantRule(9));
    await vi.waitFor(async () => expect(await t.text("/rlconfig")).toContain("edge.tenant: 9/minute"), WAIT);
    expect(await t.text("/rlconfig")).toContain("# last reload: ok");
  });

  it("follows a Kubernetes ConfigMap update that swaps the ..data symlink", async () => {
    dir = await tempDir();
    await makeConfigMap(dir, { "edge.yaml": tenantRule(5) });
    const t = await start(dir, ["--reload-poll", "0s"]);
    expect(await t.text("/rlconfig")).toContain("edge.tenant: 5/minute");

    await swapConfigMap(dir, "..2026_01_02", { "edge.yaml": tenantRule(11) });
    await vi.waitFor(async () => expect(await t.text("/rlconfig")).toContain("edge.tenant: 11/minute"), WAIT);
  });

  it("follows a ConfigMap update when --config names the file inside the mount", async () => {
    dir = await tempDir();
    await makeConfigMap(dir, { "edge.yaml": tenantRule(5) });
    const t = await start(join(dir, "edge.yaml"), ["--reload-poll", "0s"]);

    await swapConfigMap(dir, "..2026_01_02", { "edge.yaml": tenantRule(12) });
    await vi.waitFor(async () => expect(await t.text("/rlconfig")).toContain("edge.tenant: 12/minute"), WAIT);
  });

  it("sees a change by polling where no file event arrives (a nested directory)", async () => {
    dir = await tempDir();
    await mkdir(join(dir, "nested"));
    const file = join(dir, "nested", "edge.yaml");
    await writeFile(file, tenantRule(5));
    const t = await start(dir, ["--reload-poll", "50ms"]);

    await writeFile(file, tenantRule(13));
    await vi.waitFor(async () => expect(await t.text("/rlconfig")).toContain("edge.tenant: 13/minute"), WAIT);
  });

  it("reload() reloads at once and reports the problems of a broken config", async () => {
    dir = await tempDir();
    await mkdir(join(dir, "nested"));
    const file = join(dir, "nested", "edge.yaml");
    await writeFile(file, tenantRule(5));
    const t = await start(dir, ["--reload-poll", "0s"]);

    await writeFile(file, "domain: edge\ndescriptors: 3\n");
    const result = await t.app.reload();
    expect(result).toEqual({
      ok: false,
      problems: [`${file}:2:14: descriptors: must be a list, got 3`],
    });
    expect(await t.text("/rlconfig")).toContain("edge.tenant: 5/minute");
  });
});
