import { mkdir, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { type Service, startService } from "../helpers/service.js";
import { tempDir, tenantRule } from "./watch-fixture.js";

let service: Service | undefined;
let dir: string | undefined;

afterEach(async () => {
  await service?.stop();
  service = undefined;
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe("SIGHUP (built CLI)", () => {
  it("forces a reload of a change the watcher cannot see (nested directory, polling off)", async () => {
    dir = await tempDir();
    await mkdir(join(dir, "nested"));
    const file = join(dir, "nested", "edge.yaml");
    await writeFile(file, tenantRule(5));
    service = await startService({ config: dir, args: ["--reload-poll", "0s"] });
    const rlconfig = async () => (await service?.http("/rlconfig"))?.text();
    expect(await rlconfig()).toContain("edge.tenant: 5/minute");

    await writeFile(file, tenantRule(21));
    service.proc.kill("SIGHUP");
    await vi.waitFor(async () => expect(await rlconfig()).toContain("edge.tenant: 21/minute"), {
      timeout: 5_000,
      interval: 20,
    });
    expect(service.output.filter((l) => l.includes('"config reloaded"'))).toHaveLength(1);
    expect(service.proc.exitCode).toBeNull();
  });
});
