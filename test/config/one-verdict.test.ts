/**
 * `serve`, `check` and `explain` read a config through one validation path with the same settings:
 * every invalid fixture, and every setting that changes a verdict, gets the same verdict (and the
 * same problems) from all three.
 */
import { mkdir, mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { StartupError, startApp } from "../../src/app.js";
import { runCheck, runExplain } from "../../src/commands.js";
import { ConfigError, formatProblem } from "../../src/config/errors.js";
import { loadSettings, type SettingName } from "../../src/settings.js";
import { VALIDATION_SETTINGS } from "../../src/validation.js";

const FIXTURES = join(import.meta.dirname, "../fixtures/config/invalid");

type Env = Record<string, string>;
interface Verdict {
  readonly ok: boolean;
  readonly problems: readonly string[];
}

function recorder() {
  const lines = { log: [] as string[], error: [] as string[] };
  return { lines, out: { log: (l: string) => lines.log.push(l), error: (l: string) => lines.error.push(l) } };
}

/** The problem lines of an offline command's stderr (its last line is the count). */
const problemLines = (errors: readonly string[]) =>
  errors.filter((l) => !/: (\d+ problem\(s\)|ok \()/.test(l));

async function check(path: string, args: readonly string[], env: Env): Promise<Verdict> {
  const { lines, out } = recorder();
  const code = await runCheck([path, ...args], out, env);
  expect([0, 1]).toContain(code);
  return { ok: code === 0, problems: code === 0 ? [] : problemLines(lines.error) };
}

async function explain(path: string, args: readonly string[], env: Env): Promise<Verdict> {
  const { lines, out } = recorder();
  const code = await runExplain(
    ["--config", path, "--domain", "d", "--descriptor", "k=v", ...args],
    out,
    env,
  );
  expect([0, 1]).toContain(code);
  return { ok: code === 0, problems: code === 0 ? [] : problemLines(lines.error) };
}

async function serve(path: string, args: readonly string[], env: Env): Promise<Verdict> {
  const listen = ["--grpc-addr", "127.0.0.1:0", "--http-addr", "127.0.0.1:0", "--config", path];
  const settings = loadSettings([...listen, ...args], env);
  try {
    const app = await startApp(settings, pino({ level: "silent" }));
    await app.shutdown();
    return { ok: true, problems: [] };
  } catch (err) {
    // startApp names the step that failed; a config's problems fail the "config" step.
    if (!(err instanceof StartupError && err.step === "config" && err.cause instanceof ConfigError))
      throw err;
    return { ok: false, problems: err.cause.problems.map(formatProblem) };
  }
}

/** The verdicts of all three commands on one config and one set of settings. */
async function verdicts(path: string, args: readonly string[] = [], env: Env = {}) {
  return {
    serve: await serve(path, args, env),
    check: await check(path, args, env),
    explain: await explain(path, args, env),
  };
}

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "tollgate-verdict-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function configFile(name: string, text: string): Promise<string> {
  const path = join(dir, name);
  await writeFile(path, text);
  return path;
}

describe("one verdict for serve, check and explain", async () => {
  const fixtures = (await readdir(FIXTURES)).sort();

  it.each(fixtures)("rejects invalid fixture %s in all three with the same problems", async (file) => {
    const v = await verdicts(join(FIXTURES, file));
    expect(v.serve.ok).toBe(false);
    expect(v.serve.problems.length).toBeGreaterThan(0);
    expect(v.check).toEqual(v.serve);
    expect(v.explain).toEqual(v.serve);
  });

  const BURST =
    "domain: d\ndescriptors:\n  - key: k\n    rate_limit: { unit: second, requests_per_unit: 5, burst: 10 }\n";
  const TIERS = `domain: d
descriptors:
  - key: k
    rate_limit: { unit: second, requests_per_unit: 5 }
tiers:
  default_tier: free
  tiers:
    - name: free
      limits:
        - rate_limit: { unit: minute, requests_per_unit: 2 }
`;

  /** Per validation setting: a config and settings it rejects, and the same config accepted without them. */
  const CASES: Readonly<Record<string, () => Promise<{ path: string; args: string[]; env: Env }>>> = {
    defaultAlgorithm: async () => ({
      path: await configFile("burst.yaml", BURST),
      args: [],
      env: { TOLLGATE_DEFAULT_ALGORITHM: "fixed_window" },
    }),
    compat: async () => ({
      path: await configFile("burst.yaml", BURST),
      args: ["--compat", "envoyproxy"],
      env: {},
    }),
    tenants: async () => {
      const tenants = join(dir, "tenants.csv");
      await writeFile(tenants, "acme,platinum\n");
      return { path: await configFile("tiers.yaml", TIERS), args: ["--tenants", tenants], env: {} };
    },
  };

  it("has a case for every setting that affects validation", () => {
    expect(Object.keys(CASES).sort()).toEqual([...VALIDATION_SETTINGS].sort());
  });

  it.each(
    VALIDATION_SETTINGS as SettingName[],
  )("gives the same verdict with and without setting %s", async (name) => {
    const make = CASES[name];
    if (make === undefined) throw new Error(`no case for ${name}`);
    const { path, args, env } = await make();
    const plain = await verdicts(path);
    expect(plain).toEqual({ serve: plain.serve, check: plain.serve, explain: plain.serve });
    expect(plain.serve.ok).toBe(true);
    const set = await verdicts(path, args, env);
    expect(set.serve.ok).toBe(false);
    expect(set.check).toEqual(set.serve);
    expect(set.explain).toEqual(set.serve);
  });

  it("reads the config where envoyproxy/ratelimit's RUNTIME_ROOT points, in all three", async () => {
    const root = join(dir, "runtime");
    await mkdir(join(root, "rl", "config"), { recursive: true });
    await writeFile(join(root, "rl", "config", "d.yaml"), BURST.replace("burst: 10", "burst: 0"));
    const env = { RUNTIME_ROOT: root, RUNTIME_SUBDIRECTORY: "rl" };
    const settings = loadSettings([], env);
    expect(settings.config).toBe(join(root, "rl", "config"));
    const { lines, out } = recorder();
    expect(await runCheck([], out, env)).toBe(1);
    const v = await verdicts(settings.config);
    expect(problemLines(lines.error)).toEqual(v.serve.problems);
    expect(v.check).toEqual(v.serve);
    expect(v.explain).toEqual(v.serve);
  });
});
