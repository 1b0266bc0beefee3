/**
 * The Dockerfile read as data for the integration-file tests: its build arguments with their
 * defaults, the final stage's instructions (WORKDIR, ENV, LABEL, COPY, `RUN ln -s`, USER, EXPOSE,
 * HEALTHCHECK, ENTRYPOINT) and the Node image it builds on. Line continuations are joined; quoted
 * values are unquoted.
 */
import { readFileSync } from "node:fs";
import { join, posix } from "node:path";
import { repo } from "./files.js";

export interface Dockerfile {
  /** `ARG NAME=default` lines (before or inside stages), by name. */
  readonly args: ReadonlyMap<string, string>;
  /** The final stage's `ENV` and `LABEL` pairs, by key, with `${ARG}` references as written. */
  readonly env: ReadonlyMap<string, string>;
  readonly labels: ReadonlyMap<string, string>;
  /** The final stage's last `WORKDIR`. */
  readonly workdir: string;
  /** The final stage's `COPY` instructions from the build context: destination → source. */
  readonly copies: ReadonlyMap<string, string>;
  /** Symbolic links the final stage makes with `ln -s TARGET LINK` in a `RUN`: link → target. */
  readonly links: ReadonlyMap<string, string>;
  /** The final stage's `EXPOSE`d ports. */
  readonly exposed: readonly number[];
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
  let workdir = "/";
  let copies = new Map<string, string>();
  let links = new Map<string, string>();
  let exposed: number[] = [];
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
      copies = new Map();
      links = new Map();
      exposed = [];
    }
    if (keyword === "WORKDIR") workdir = posix.resolve(workdir, body);
    if (keyword === "COPY" && !body.startsWith("--") && rest.length === 2)
      copies.set(posix.resolve(workdir, rest[1] ?? ""), rest[0] ?? "");
    if (keyword === "RUN")
      for (const m of body.matchAll(/\bln -s (\S+) (\S+)/g))
        links.set(posix.resolve(workdir, m[2] ?? ""), posix.resolve(workdir, m[1] ?? ""));
    if (keyword === "EXPOSE") exposed = [...exposed, ...rest.map((p) => Number.parseInt(p, 10))];
    if (keyword === "ENV") for (const [k, v] of pairs(body)) env.set(k, v);
    if (keyword === "LABEL") for (const [k, v] of pairs(body)) labels.set(k, v);
    if (keyword === "USER") user = body;
    if (keyword === "HEALTHCHECK") healthcheck = body;
    if (keyword === "ENTRYPOINT") entrypoint = body;
  }
  return { args, env, labels, workdir, copies, links, exposed, user, healthcheck, entrypoint, bases };
}

/** Where a path the process opens relative to its working directory lands in the image, links followed. */
export function imagePath(docker: Dockerfile, path: string): string {
  let at = posix.resolve(docker.workdir, path);
  for (let hops = 0; docker.links.has(at) && hops < 8; hops++) at = docker.links.get(at) ?? at;
  return at;
}
