import { rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { fingerprint } from "../../src/config/fingerprint.js";
import { type ConfigWatcher, watchConfig } from "../../src/config/watch.js";
import { makeConfigMap, swapConfigMap, tempDir, tenantRule, writeAtomic } from "./watch-fixture.js";

let watcher: ConfigWatcher | undefined;
let dir: string | undefined;

afterEach(async () => {
  watcher?.close();
  watcher = undefined;
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe("watchConfig", () => {
  it("calls onChange only when a config file really changed", async () => {
    dir = await tempDir();
    const file = join(dir, "edge.yaml");
    await writeFile(file, tenantRule(1));
    const onChange = vi.fn();
    watcher = watchConfig({ paths: [dir], debounceMs: 10_000, pollMs: 0, events: false, onChange });
    await watcher.ready;

    await watcher.check();
    expect(onChange).not.toHaveBeenCalled();
    await writeFile(join(dir, "notes.txt"), "not config");
    await watcher.check();
    expect(onChange).not.toHaveBeenCalled();
    await writeAtomic(file, tenantRule(2));
    await watcher.check();
    await watcher.check();
    expect(onChange).toHaveBeenCalledTimes(1);
  });

  it("turns a burst of writes into one onChange after the debounce", async () => {
    dir = await tempDir();
    const file = join(dir, "edge.yaml");
    await writeFile(file, tenantRule(1));
    const onChange = vi.fn();
    watcher = watchConfig({ paths: [file], debounceMs: 300, pollMs: 0, onChange });
    await watcher.ready;

    for (let i = 2; i < 6; i++) await writeAtomic(file, tenantRule(i));
    await vi.waitFor(() => expect(onChange).toHaveBeenCalled(), { timeout: 5_000, interval: 20 });
    await watcher.check();
    expect(onChange).toHaveBeenCalledTimes(1);
  });

  it("polls when events are off", async () => {
    dir = await tempDir();
    const file = join(dir, "edge.yaml");
    await writeFile(file, tenantRule(1));
    const onChange = vi.fn();
    watcher = watchConfig({ paths: [file], debounceMs: 1, pollMs: 20, events: false, onChange });
    await watcher.ready;

    await writeFile(file, tenantRule(22));
    await vi.waitFor(() => expect(onChange).toHaveBeenCalledTimes(1), { timeout: 5_000, interval: 20 });
  });

  it("fingerprints a ConfigMap mount through its ..data symlink and skips the dot directories", async () => {
    dir = await tempDir();
    await makeConfigMap(dir, { "edge.yaml": tenantRule(1) });
    const before = await fingerprint([dir]);
    expect(before.split("\n")).toHaveLength(1);
    expect(before).toContain("..2026_01_01/edge.yaml");

    await swapConfigMap(dir, "..2026_01_02", { "edge.yaml": tenantRule(1) });
    const after = await fingerprint([dir]);
    expect(after).toContain("..2026_01_02/edge.yaml");
    expect(after).not.toBe(before);
  });

  it("counts a missing path as part of the fingerprint, so its creation is a change", async () => {
    dir = await tempDir();
    const file = join(dir, "tenants.csv");
    const missing = await fingerprint([file]);
    expect(missing).toContain("ENOENT");
    await writeFile(file, "acme,gold\n");
    expect(await fingerprint([file])).not.toBe(missing);
  });
});
