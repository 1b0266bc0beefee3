import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { SEMI_SPACE } from "../../bench/targets.mjs";

const repo = new URL("../../", import.meta.url);
const read = (path: string) => readFileSync(new URL(path, repo), "utf8");

describe("the V8 young-generation flag tollgate ships with", () => {
  it("is the same in the Dockerfile, npm start and the benchmark", () => {
    expect(SEMI_SPACE).toMatch(/^--max-semi-space-size=\d+$/);
    const entrypoint = /^ENTRYPOINT (.*)$/m.exec(read("Dockerfile"))?.[1] ?? "";
    expect(JSON.parse(entrypoint)).toEqual(["node", SEMI_SPACE, "dist/cli.js"]);
    const start = JSON.parse(read("package.json")).scripts.start as string;
    expect(start).toContain(`node ${SEMI_SPACE} dist/cli.js serve`);
  });

  it("is documented where operators tune the process", () => {
    expect(read("docs/operations.md")).toContain(SEMI_SPACE);
  });
});
