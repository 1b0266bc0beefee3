import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { COMMANDS } from "../src/help.js";
import { SETTINGS } from "../src/settings.js";
import { VALIDATION_SETTINGS } from "../src/validation.js";
import { runCli } from "./helpers/service.js";

/** Runs the built CLI to its exit. */
const tollgate = (...args: string[]) => runCli(args);

describe("tollgate help", () => {
  it("lists every command, the global flags and an example", async () => {
    const run = await tollgate("help");
    expect(run.code).toBe(0);
    for (const c of COMMANDS) expect(run.stdout).toMatch(new RegExp(`^  ${c} `, "m"));
    expect(run.stdout).toContain("--version");
    expect(run.stdout).toMatch(/^example:\n {2}tollgate serve /m);
    expect((await tollgate("--help")).stdout).toBe(run.stdout);
  });

  it("documents every serve setting with its flag, environment twin and default, and exits without serving", async () => {
    const run = await tollgate("serve", "--help");
    expect(run.code).toBe(0);
    for (const s of Object.values(SETTINGS)) {
      expect(run.stdout).toMatch(new RegExp(`^  ${s.flag} `, "m"));
      expect(run.stdout.replace(/\s+/g, " ")).toContain(`env ${s.env}, default`);
    }
    expect(run.stdout).toMatch(/^example:\n {2}tollgate serve --config /m);
    expect(run.stderr).not.toContain("ready");
  });

  it.each(
    COMMANDS,
  )("prints one help with an example for %s, asked with --help, -h or help COMMAND", async (command) => {
    const viaFlag = await tollgate(command, "--help");
    expect(viaFlag.code).toBe(0);
    expect(viaFlag.stdout).toMatch(new RegExp(`^usage: tollgate ${command}`));
    expect(viaFlag.stdout).toMatch(new RegExp(`^example:\\n  .*tollgate ${command} `, "m"));
    expect((await tollgate("help", command)).stdout).toBe(viaFlag.stdout);
    expect((await tollgate(command, "-h")).stdout).toBe(viaFlag.stdout);
  });

  it("lists the arguments of check and explain, and serve's options that change a config's verdict", async () => {
    const check = (await tollgate("check", "--help")).stdout;
    expect(check).toMatch(/^usage: tollgate check \[PATH\] \[serve options\]$/m);
    expect(check).toMatch(/^ {2}PATH$/m);
    const explain = (await tollgate("explain", "--help")).stdout;
    for (const flag of ["--domain D", "--descriptor k=v[,k2=v2]"]) expect(explain).toContain(`  ${flag}\n`);
    expect(explain).toMatch(/--descriptor k=v\[,k2=v2\] \[--descriptor …\] \[serve options\]$/m);
    for (const text of [check, explain]) {
      for (const s of [SETTINGS.config, ...VALIDATION_SETTINGS.map((n) => SETTINGS[n])]) {
        expect(text).toMatch(new RegExp(`^  ${s.flag} `, "m"));
        expect(text.replace(/\s+/g, " ")).toContain(`env ${s.env}, default`);
      }
      expect(text).toContain("tollgate serve --help");
    }
  });

  it("refuses help on an unknown command with exit code 2", async () => {
    const run = await tollgate("help", "serv");
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('unknown command "serv"');
    expect((await tollgate("serv")).code).toBe(2);
  });
});

describe("tollgate --version", () => {
  it("prints the version of package.json and exits 0", async () => {
    const pkg = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as {
      version: string;
    };
    expect(await tollgate("--version")).toEqual({ code: 0, stdout: `tollgate ${pkg.version}\n`, stderr: "" });
    expect((await tollgate("version")).stdout).toBe(`tollgate ${pkg.version}\n`);
  });
});
