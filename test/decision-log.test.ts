import { rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { pino } from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { decisionLog, descriptorText, MAX_SHAPES } from "../src/decision-log.js";
import type { RuleSet } from "../src/engine/types.js";
import { startTestApp, type TestApp, tempDir } from "./config/watch-fixture.js";
import { FakeClock } from "./helpers/fake-clock.js";

const CONFIG = [
  "domain: edge",
  "descriptors:",
  "  - key: tenant",
  "    rate_limit: { unit: minute, requests_per_unit: 1 }",
  "",
].join("\n");

const json = (domain: string, entries: Record<string, string>[]) =>
  JSON.stringify({
    domain,
    descriptors: entries.map((e) => ({ entries: Object.entries(e).map(([key, value]) => ({ key, value })) })),
  });

describe("decision log", () => {
  let t: TestApp | undefined;
  let dir: string | undefined;
  afterEach(async () => {
    await t?.close();
    if (dir) await rm(dir, { recursive: true });
    t = undefined;
  });

  async function start(level: string): Promise<TestApp> {
    dir = await tempDir();
    await writeFile(join(dir, "edge.yaml"), CONFIG);
    t = await startTestApp(dir, ["--log-level", level]);
    return t;
  }
  const post = (app: TestApp, body: string) => app.http("/json", { method: "POST", body });

  it("writes one debug line per decision with the domain, descriptors (values cut) and each result", async () => {
    const app = await start("debug");
    const long = "x".repeat(100);
    await post(app, json("edge", [{ tenant: "acme" }]));
    await post(app, json("edge", [{ tenant: "acme" }, { path: long }]));
    const lines = app.logs.filter((l) => l.msg === "decision");
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatchObject({
      domain: "edge",
      descriptors: ["tenant=acme"],
      results: ["ok"],
      code: "OK",
    });
    expect(lines[1]).toMatchObject({
      descriptors: ["tenant=acme", `path=${"x".repeat(64)}…`],
      results: ["over_limit", "no_match"],
      code: "OVER_LIMIT",
    });
  });

  it("writes no decision lines at info, but warns once a minute per unknown domain and per unmatched key set", async () => {
    const app = await start("info");
    for (let i = 0; i < 5; i++) {
      await post(app, json("edgee", [{ tenant: `t${i}` }]));
      await post(app, json("edge", [{ user: `u${i}`, route: "r" }]));
    }
    expect(app.logs.some((l) => l.msg === "decision")).toBe(false);
    const warns = app.logs.filter((l) => l.level === 40);
    expect(warns).toHaveLength(2);
    expect(warns[0]).toMatchObject({
      domain: "edgee",
      configuredDomains: ["edge"],
      msg: 'unknown domain "edgee": answered OK, nothing limited (check the domain of Envoy\'s ratelimit filter)',
    });
    expect(warns[1]).toMatchObject({
      domain: "edge",
      keys: ["user", "route"],
      msg: 'descriptor [user, route] matches no rule in domain "edge": answered OK, nothing limited',
    });
    // Keys only, never the request's values.
    expect(JSON.stringify(warns)).not.toContain("u1");
  });
});

describe("decisionLog", () => {
  const rules: RuleSet = { domains: new Map(), files: [] } as unknown as RuleSet;

  it("leaves the per-decision hook out unless debug is on, so the engine builds nothing for it", () => {
    expect(
      decisionLog(pino({ level: "info" }), { rules: () => rules, clock: new FakeClock(0) }).observer.decided,
    ).toBe(undefined);
    expect(
      decisionLog(pino({ level: "debug" }), { rules: () => rules, clock: new FakeClock(0) }).observer.decided,
    ).toBeTypeOf("function");
  });

  it("counts what it held back and tracks a bounded number of shapes", () => {
    const lines: Record<string, unknown>[] = [];
    const logger = pino({ level: "info" }, { write: (s: string) => void lines.push(JSON.parse(s)) });
    const clock = new FakeClock(0);
    const { observer } = decisionLog(logger, { rules: () => rules, clock, everyMs: 1_000 });
    for (let i = 0; i < 3; i++) observer.noMatch?.("d", [{ key: "a", value: String(i) }]);
    clock.advance(1_000);
    observer.noMatch?.("d", [{ key: "a", value: "x" }]);
    expect(lines.map((l) => l.heldBack)).toEqual([0, 2]);
    for (let i = 0; i < MAX_SHAPES + 10; i++) observer.noMatch?.("d", [{ key: `k${i}`, value: "v" }]);
    // 999 new shapes fit beside ["a"]; the rest share one line.
    expect(lines).toHaveLength(2 + MAX_SHAPES - 1 + 1);
    expect(lines.at(-1)?.moreShapes).toContain(`over ${MAX_SHAPES} shapes`);
  });

  it("cuts long values in the debug text", () => {
    expect(descriptorText([{ key: "k", value: "y".repeat(70) }])).toBe(`k=${"y".repeat(64)}…`);
  });
});
