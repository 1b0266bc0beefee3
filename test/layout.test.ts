/**
 * The test tree's layout (docs/architecture.md, "Tests"): a unit test of `src/X/Y.ts` lives in
 * `test/X/`, a test of a file at the top of `src/` lives at the top of `test/` and is named after it
 * (`logger.test.ts`, `logger-no-pretty-import.test.ts`), and everything else is in a named suite
 * folder that has a README.md saying what it holds and how it runs. `test/helpers/` and
 * `test/fixtures/` hold no tests. A test file anywhere else fails this test.
 */
import { existsSync, readdirSync, statSync } from "node:fs";
import { join, posix } from "node:path";
import { describe, expect, it } from "vitest";

/** Suite folders that are not mirrors of src/: each has a README.md. */
const SUITES = ["contract", "integration", "chaos", "attack", "alerts", "fuzz", "bench", "examples"] as const;
/** Folders of support code, never tests. */
const SUPPORT = ["helpers", "fixtures"];
/** Tests at the top of test/ that check the tree itself rather than a src file. */
const TREE_TESTS = ["layout", "imports"];

/** What the layout rules need to know about the repository. */
interface Tree {
  /** Folders under src/, relative, posix ("engine", "engine/rlqs"). */
  srcDirs: ReadonlySet<string>;
  /** Names of the .ts files at the top of src/ without extension ("app", "settings-schema"). */
  srcRootFiles: ReadonlySet<string>;
  /** Suite folders whose README.md exists. */
  suitesWithReadme: ReadonlySet<string>;
}

/** Why `file` (posix, relative to test/) is outside the layout, or undefined when it is in place. */
function misplaced(file: string, tree: Tree): string | undefined {
  const dir = posix.dirname(file);
  const top = file.split("/")[0] ?? "";
  if (dir === ".") {
    const stem = file.replace(/\.test\.ts$/, "");
    if (TREE_TESTS.includes(stem)) return undefined;
    for (const name of tree.srcRootFiles) if (stem === name || stem.startsWith(`${name}-`)) return undefined;
    return `test/${file}: at the top of test/ but src/ has no ${stem}.ts (name it after a src root file or move it)`;
  }
  if (SUPPORT.includes(top)) return `test/${file}: test/${top}/ holds support code, not tests`;
  if ((SUITES as readonly string[]).includes(top)) {
    return tree.suitesWithReadme.has(top) ? undefined : `test/${file}: suite test/${top}/ has no README.md`;
  }
  if (tree.srcDirs.has(dir)) return undefined;
  return `test/${file}: test/${dir}/ mirrors no src/ folder and is not a suite (${SUITES.join(", ")})`;
}

function walk(root: string, rel = ""): string[] {
  const out: string[] = [];
  for (const name of readdirSync(join(root, rel))) {
    const path = rel === "" ? name : `${rel}/${name}`;
    if (statSync(join(root, path)).isDirectory()) out.push(path, ...walk(root, path));
    else out.push(path);
  }
  return out;
}

const repo = join(import.meta.dirname, "..");

function realTree(): Tree {
  const src = walk(join(repo, "src"));
  return {
    srcDirs: new Set(src.filter((p) => statSync(join(repo, "src", p)).isDirectory())),
    srcRootFiles: new Set(
      src.filter((p) => !p.includes("/") && p.endsWith(".ts")).map((p) => p.slice(0, -3)),
    ),
    suitesWithReadme: new Set(SUITES.filter((s) => existsSync(join(repo, "test", s, "README.md")))),
  };
}

describe("test tree layout", () => {
  it("every test file mirrors a src/ folder, a src root file, or sits in a named suite", () => {
    const tree = realTree();
    const tests = walk(join(repo, "test")).filter((p) => p.endsWith(".test.ts"));
    expect(tests.length).toBeGreaterThan(100);
    expect(tests.map((t) => misplaced(t, tree)).filter((why) => why !== undefined)).toEqual([]);
  });

  it("every named suite exists with a README.md", () => {
    expect(SUITES.filter((s) => !existsSync(join(repo, "test", s, "README.md")))).toEqual([]);
  });

  const tree: Tree = {
    srcDirs: new Set(["engine", "engine/rlqs", "protocol"]),
    srcRootFiles: new Set(["app", "logger"]),
    suitesWithReadme: new Set(["contract"]),
  };
  it.each([
    ["engine/rlqs/allocator.test.ts"],
    ["protocol/quota.test.ts"],
    ["app.test.ts"],
    ["logger-no-pretty-import.test.ts"],
    ["layout.test.ts"],
    ["contract/memory.test.ts"],
  ])("accepts %s", (file) => {
    expect(misplaced(file, tree)).toBeUndefined();
  });

  it.each([
    ["rlqs/allocator.test.ts", "mirrors no src/ folder"],
    ["engine/extract/ip.test.ts", "mirrors no src/ folder"],
    ["timers.test.ts", "src/ has no timers.ts"],
    ["chaos/redis-kill.test.ts", "has no README.md"],
    ["helpers/redis.test.ts", "support code"],
  ])("rejects %s", (file, why) => {
    expect(misplaced(file, tree)).toContain(why);
  });
});
