/**
 * Builds dist/ before the suite when it is missing or older than src/ (integration tests run the built
 * CLI as a separate process). `npm test` builds first, so this is usually a no-op.
 */
import { execFileSync } from "node:child_process";
import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("../..", import.meta.url));

function newest(dir: string): number {
  let t = 0;
  for (const e of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (e.isFile() && e.name.endsWith(".ts")) t = Math.max(t, statSync(join(e.parentPath, e.name)).mtimeMs);
  }
  return t;
}

export default function setup(): void {
  let built = 0;
  try {
    built = statSync(join(root, "dist/cli.js")).mtimeMs;
  } catch {
    built = 0;
  }
  if (built < newest(join(root, "src"))) {
    execFileSync(join(root, "node_modules/.bin/tsc"), ["-p", "tsconfig.build.json"], {
      cwd: root,
      stdio: "inherit",
    });
  }
}
