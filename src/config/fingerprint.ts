/**
 * A cheap identity of what a config load would read: for every file (a file path itself, or each
 * `*.yaml`/`*.yml` under a directory path, skipping `.`-prefixed names like `loadConfig` does) its
 * real path, inode, size and mtime. Symlinks are followed, so a ConfigMap's `..data` swap changes
 * the real path and inode of every file behind it. Missing files are part of the identity too.
 */
import { readdir, realpath, stat } from "node:fs/promises";
import { extname, join } from "node:path";

const CONFIG_EXTENSIONS = new Set([".yaml", ".yml"]);

async function describeFile(path: string): Promise<string> {
  try {
    const [real, info] = await Promise.all([realpath(path), stat(path)]);
    return `${path}\t${real}\t${info.ino}\t${info.size}\t${info.mtimeMs}`;
  } catch (err) {
    return `${path}\t${(err as NodeJS.ErrnoException).code ?? "error"}`;
  }
}

async function describeDir(dir: string, seen: Set<string>, out: string[]): Promise<void> {
  let real: string;
  let names: string[];
  try {
    real = await realpath(dir);
    names = (await readdir(dir)).filter((n) => !n.startsWith(".")).sort();
  } catch (err) {
    out.push(`${dir}\t${(err as NodeJS.ErrnoException).code ?? "error"}`);
    return;
  }
  if (seen.has(real)) return;
  seen.add(real);
  for (const name of names) {
    const path = join(dir, name);
    const info = await stat(path).catch(() => undefined);
    if (info?.isDirectory()) await describeDir(path, seen, out);
    else if (CONFIG_EXTENSIONS.has(extname(name).toLowerCase())) out.push(await describeFile(path));
  }
}

/** The fingerprint of `paths` (files or directories); equal strings mean nothing changed. */
export async function fingerprint(paths: readonly string[]): Promise<string> {
  const out: string[] = [];
  for (const path of paths) {
    const info = await stat(path).catch(() => undefined);
    if (info?.isDirectory()) await describeDir(path, new Set(), out);
    else out.push(await describeFile(path));
  }
  return out.join("\n");
}
