import { mkdir, mkdtemp, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ConfigError, formatProblem } from "../../src/config/errors.js";
import { loadConfig } from "../../src/config/load.js";

const rule = (domain: string, key: string) =>
  `domain: ${domain}\ndescriptors:\n  - key: ${key}\n    rate_limit: { unit: second, requests_per_unit: 1 }\n`;

async function problemsOf(path: string): Promise<string[]> {
  try {
    await loadConfig(path);
  } catch (err) {
    if (err instanceof ConfigError) return err.problems.map(formatProblem);
    throw err;
  }
  return [];
}

describe("loadConfig", () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "tollgate-config-"));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("loads a single file", async () => {
    const file = join(dir, "one.yaml");
    await writeFile(file, rule("a", "k"));
    const { ruleSet } = await loadConfig(file);
    expect([...ruleSet.domains.keys()]).toEqual(["a"]);
    expect(ruleSet.files).toEqual([file]);
  });

  it("loads *.yaml and *.yml of a directory and its subdirectories, skipping dotfiles and other files", async () => {
    await writeFile(join(dir, "a.yaml"), rule("a", "k"));
    await writeFile(join(dir, "b.YML"), rule("b", "k"));
    await writeFile(join(dir, ".hidden.yaml"), "not: valid: yaml: at all");
    await writeFile(join(dir, "notes.txt"), "ignored");
    await mkdir(join(dir, "sub"));
    await writeFile(join(dir, "sub", "c.yml"), rule("c", "k"));
    const { ruleSet } = await loadConfig(dir);
    expect([...ruleSet.domains.keys()].sort()).toEqual(["a", "b", "c"]);
  });

  it("reads a Kubernetes ConfigMap mount through its top-level symlinks, once", async () => {
    const version = join(dir, "..2024_01_01_00_00_00.000");
    await mkdir(version);
    await writeFile(join(version, "edge.yaml"), rule("edge", "tenant"));
    await symlink("..2024_01_01_00_00_00.000", join(dir, "..data"));
    await symlink("..data/edge.yaml", join(dir, "edge.yaml"));
    const { ruleSet } = await loadConfig(dir);
    expect([...ruleSet.domains.keys()]).toEqual(["edge"]);
    expect(ruleSet.files).toEqual([join(dir, "edge.yaml")]);
  });

  it("rejects a domain defined in two files, naming both", async () => {
    await writeFile(join(dir, "a.yaml"), rule("edge", "k"));
    await writeFile(join(dir, "b.yaml"), rule("edge", "j"));
    expect(await problemsOf(dir)).toEqual([
      `${join(dir, "b.yaml")}:1:9: domain: duplicate domain "edge" (first defined in ${join(dir, "a.yaml")}:1)`,
    ]);
  });

  it("reports the problems of every file together", async () => {
    await writeFile(
      join(dir, "a.yaml"),
      "domain: a\ndescriptors:\n  - key: k\n    rate_limit: { unit: sec }\n",
    );
    await writeFile(join(dir, "b.yaml"), "domain: ''\n");
    const problems = await problemsOf(dir);
    expect(problems).toHaveLength(3);
    expect(problems[0]).toContain("a.yaml:4:");
    expect(problems[2]).toBe(`${join(dir, "b.yaml")}:1:9: domain: must not be empty`);
  });

  it("fails clearly for a missing path and for a directory without config files", async () => {
    expect((await problemsOf(join(dir, "nope.yaml")))[0]).toMatch(/nope\.yaml: cannot read: ENOENT/);
    expect(await problemsOf(dir)).toEqual([`${dir}: no *.yaml or *.yml config files found`]);
  });

  it("reports a dangling symlink and still checks the other files", async () => {
    await symlink("missing.yaml", join(dir, "dangling.yaml"));
    await writeFile(join(dir, "ok.yaml"), "domain: ok\ndescriptors: 5\n");
    const problems = await problemsOf(dir);
    expect(problems[0]).toMatch(/dangling\.yaml: cannot read: ENOENT/);
    expect(problems[1]).toBe(`${join(dir, "ok.yaml")}:2:14: descriptors: must be a list, got 5`);
  });
});
