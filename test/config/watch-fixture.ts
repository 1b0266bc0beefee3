/**
 * In-process tollgate for the reload tests: `startApp` on port 0 with the memory store and a pino
 * logger that records every line, plus small file helpers (atomic write, ConfigMap layout).
 */
import { mkdir, mkdtemp, readlink, rename, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type App, startApp } from "../../src/app.js";
import { loadSettings } from "../../src/settings.js";
import { recordLogs } from "../helpers/logs.js";

export interface TestApp {
  readonly app: App;
  /** Every log line, parsed. */
  readonly logs: Record<string, unknown>[];
  http(path: string, init?: RequestInit): Promise<Response>;
  text(path: string): Promise<string>;
  close(): Promise<void>;
}

/** Start the app with `--config <config>` and extra flags; logs at `info` unless a flag says otherwise. */
export async function startTestApp(config: string, args: readonly string[] = []): Promise<TestApp> {
  const settings = loadSettings(
    [
      "--config",
      config,
      "--store",
      "memory",
      "--grpc-addr",
      "127.0.0.1:0",
      "--http-addr",
      "127.0.0.1:0",
      "--reload-debounce",
      "20ms",
      ...args,
    ],
    {},
  );
  const { logs, logger } = recordLogs(settings.logLevel);
  const app = await startApp(settings, logger);
  const base = `http://127.0.0.1:${app.httpAddress.port}`;
  const http = (path: string, init?: RequestInit) => fetch(base + path, init);
  return {
    app,
    logs,
    http,
    text: async (path) => (await http(path)).text(),
    close: () => app.shutdown(),
  };
}

/** A fresh temporary directory; remove it with `rm(dir, { recursive: true })`. */
export function tempDir(): Promise<string> {
  return mkdtemp(join(tmpdir(), "tollgate-watch-"));
}

/** Write `text` to `path` atomically (temp file + rename), as editors and deploy tools do. */
export async function writeAtomic(path: string, text: string): Promise<void> {
  const tmp = `${path}.tmp-${process.pid}`;
  await writeFile(tmp, text);
  await rename(tmp, path);
}

/** A rule file of domain `edge` limiting each tenant to `rpu` per minute. */
export function tenantRule(rpu: number): string {
  return `domain: edge\ndescriptors:\n  - key: tenant\n    rate_limit:\n      unit: minute\n      requests_per_unit: ${rpu}\n`;
}

/**
 * The layout of a Kubernetes ConfigMap volume: `..<version>/<file>`, `..data -> ..<version>`, and
 * `<file> -> ..data/<file>`. {@link swapConfigMap} moves `..data` to a new version with one rename.
 */
export async function makeConfigMap(dir: string, files: Record<string, string>): Promise<void> {
  await writeVersion(dir, "..2026_01_01", files);
  await symlink("..2026_01_01", join(dir, "..data"));
  for (const name of Object.keys(files)) await symlink(join("..data", name), join(dir, name));
}

/** What the kubelet does on an update: write a new version directory, then rename `..data` over. */
export async function swapConfigMap(dir: string, version: string, files: Record<string, string>) {
  const previous = await readlink(join(dir, "..data"));
  await writeVersion(dir, version, files);
  await symlink(version, join(dir, "..data_tmp"));
  await rename(join(dir, "..data_tmp"), join(dir, "..data"));
  await rm(join(dir, previous), { recursive: true, force: true });
}

async function writeVersion(dir: string, version: string, files: Record<string, string>) {
  await mkdir(join(dir, version));
  for (const [name, text] of Object.entries(files)) await writeFile(join(dir, version, name), text);
}
