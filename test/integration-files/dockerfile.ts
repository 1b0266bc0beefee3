/**
 * The Dockerfile read as data for the integration-file tests: its build arguments with their
 * defaults, the final stage's instructions (ENV, LABEL, USER, HEALTHCHECK, ENTRYPOINT) and the Node
 * image it builds on. Line continuations are joined; quoted values are unquoted.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { repo } from "./files.js";

export interface Dockerfile {
  /** `ARG NAME=default` lines (before or inside stages), by name. */
  readonly args: ReadonlyMap<string, string>;
  /** The final stage's `ENV` and `LABEL` pairs, by key, with `${ARG}` references as written. */
  readonly env: ReadonlyMap<string, string>;
  readonly labels: ReadonlyMap<string, string>;
  /** The final stage's `USER`, `HEALTHCHECK` and `ENTRYPOINT` (raw text after the keyword). */
  readonly user: string;
  readonly healthcheck: string;
  readonly entrypoint: string;
  /** The base image of every stage, `${ARG}` resolved from the defaults. */
  readonly bases: readonly string[];
}

/** `KEY=value KEY2="value two"` pairs of an ENV or LABEL instruction. */
function pairs(text: string): [string, string][] {
  return [...text.matchAll(/([\w.-]+)=("(?:[^"\\]|\\.)*"|\S+)/g)].map((m) => [
    m[1] ?? "",
    (m[2] ?? "").replace(/^"(.*)"$/, "$1"),
  ]);
}

export function readDockerfile(path = "Dockerfile"): Dockerfile {
  const text = readFileSync(join(repo, path), "utf8").replace(/\\\n\s*/g, " ");
  const lines = text.split("\n").filter((l) => l.trim() !== "" && !l.trimStart().startsWith("#"));
  const args = new Map<string, string>();
  const bases: string[] = [];
  let env = new Map<string, string>();
  let labels = new Map<string, string>();
  let user = "";
  let healthcheck = "";
  let entrypoint = "";
  for (const line of lines) {
    const [keyword = "", ...rest] = line.trim().split(/\s+/);
    const body = rest.join(" ");
    if (keyword === "ARG" && body.includes("=")) for (const [k, v] of pairs(body)) args.set(k, v);
    if (keyword === "FROM") {
      bases.push((rest[0] ?? "").replace(/\$\{(\w+)\}/g, (_, name: string) => args.get(name) ?? ""));
      env = new Map();
      labels = new Map();
    }
    if (keyword === "ENV") for (const [k, v] of pairs(body)) env.set(k, v);
    if (keyword === "LABEL") for (const [k, v] of pairs(body)) labels.set(k, v);
    if (keyword === "USER") user = body;
    if (keyword === "HEALTHCHECK") healthcheck = body;
    if (keyword === "ENTRYPOINT") entrypoint = body;
  }
  return { args, env, labels, user, healthcheck, entrypoint, bases };
}
