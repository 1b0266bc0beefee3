/**
 * Test support for the integration files: read YAML from envoy/, walk plain JSON safely, and evaluate
 * the subset of Envoy route matching and rate limit actions the files use, so tests can check which
 * descriptors a request produces. Unsupported constructs throw, so a new construct cannot pass unseen.
 */
import { readFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import type { JsonObject, JsonValue } from "@bufbuild/protobuf";
import { parse, parseAllDocuments } from "yaml";
import { FULL_SCHEMA } from "../../src/config/full-schema.js";
import { loadConfig } from "../../src/config/load.js";
import { matchDescriptor } from "../../src/engine/match.js";
import type { RuleSet } from "../../src/engine/types.js";

export const repo = resolve(import.meta.dirname, "../..");

/** One YAML document of a repo file as JSON (Envoy and Istio files are plain JSON-compatible YAML). */
export async function yamlFile(path: string): Promise<JsonObject> {
  return asObject(parse(await readFile(join(repo, path), "utf8")) as JsonValue, path);
}

/** Every document of a multi-document YAML file. */
export async function yamlDocuments(path: string): Promise<JsonObject[]> {
  const docs = parseAllDocuments(await readFile(join(repo, path), "utf8"));
  return docs.map((d, i) => asObject(d.toJS() as JsonValue, `${path}#${i}`));
}

export function asObject(v: JsonValue | undefined, what: string): JsonObject {
  if (v === null || typeof v !== "object" || Array.isArray(v)) throw new Error(`${what}: not an object`);
  return v;
}

export function asArray(v: JsonValue | undefined, what: string): JsonValue[] {
  if (!Array.isArray(v)) throw new Error(`${what}: not a list`);
  return v;
}

/** `obj.a.b[0].c` as `at(obj, "a", "b", 0, "c")`; throws naming the missing step. */
export function at(v: JsonValue | undefined, ...path: (string | number)[]): JsonValue {
  let cur = v;
  const seen: string[] = [];
  for (const step of path) {
    seen.push(String(step));
    cur = typeof step === "number" ? asArray(cur, seen.join("."))[step] : asObject(cur, seen.join("."))[step];
    if (cur === undefined) throw new Error(`missing ${seen.join(".")}`);
  }
  if (cur === undefined) throw new Error("missing value");
  return cur;
}

/** The `socket_address` of an Envoy cluster's first endpoint. */
export function firstEndpoint(cluster: JsonValue | undefined): JsonValue {
  return at(
    cluster,
    "load_assignment",
    "endpoints",
    0,
    "lb_endpoints",
    0,
    "endpoint",
    "address",
    "socket_address",
  );
}

/** A request as route matching sees it. */
export interface Req {
  readonly method: string;
  readonly path: string;
  readonly headers: Readonly<Record<string, string>>;
}

function header(req: Req, name: string): string | undefined {
  if (name === ":method") return req.method;
  if (name === ":path") return req.path;
  return req.headers[name];
}

function stringMatch(m: JsonObject, value: string): boolean {
  if (typeof m.exact === "string") return value === m.exact;
  if (typeof m.prefix === "string") return value.startsWith(m.prefix);
  if (m.safe_regex !== undefined) return new RegExp(String(at(m, "safe_regex", "regex"))).test(value);
  throw new Error(`unsupported string_match ${JSON.stringify(m)}`);
}

/** Envoy HeaderMatcher with `string_match` and `invert_match` (an absent header never matches). */
export function headerMatches(matcher: JsonObject, req: Req): boolean {
  const value = header(req, String(at(matcher, "name")));
  const matched =
    value !== undefined && stringMatch(asObject(at(matcher, "string_match"), "string_match"), value);
  return matcher.invert_match === true ? !matched : matched;
}

/** The first route of a virtual host that matches (prefix + headers). */
export function selectRoute(routes: JsonValue[], req: Req): JsonObject {
  for (const r of routes) {
    const route = asObject(r, "route");
    const match = asObject(at(route, "match"), "match");
    if (typeof match.prefix !== "string") throw new Error("only prefix route matches are supported here");
    const headers = (match.headers as JsonValue[] | undefined) ?? [];
    if (
      req.path.startsWith(match.prefix) &&
      headers.every((h) => headerMatches(asObject(h, "header"), req))
    ) {
      return route;
    }
  }
  throw new Error(`no route for ${req.method} ${req.path}`);
}

/** Descriptors a `rate_limits` list produces for a request: an entry whose action yields nothing is skipped. */
export function descriptors(rateLimits: JsonValue[], req: Req): string[][] {
  const out: string[][] = [];
  for (const rl of rateLimits) {
    const entries: string[] = [];
    let complete = true;
    for (const a of asArray(at(rl, "actions"), "actions")) {
      const action = asObject(a, "action");
      const entry = actionEntry(action, req);
      if (entry === undefined) complete = false;
      else entries.push(entry);
    }
    if (complete) out.push(entries);
  }
  return out;
}

function actionEntry(action: JsonObject, req: Req): string | undefined {
  if (action.request_headers !== undefined) {
    const value = header(req, String(at(action, "request_headers", "header_name")));
    return value === undefined
      ? undefined
      : `${String(at(action, "request_headers", "descriptor_key"))}=${value}`;
  }
  if (action.generic_key !== undefined) {
    const g = asObject(action.generic_key, "generic_key");
    return `${String(g.descriptor_key ?? "generic_key")}=${String(at(g, "descriptor_value"))}`;
  }
  if (action.header_value_match !== undefined) {
    const h = asObject(action.header_value_match, "header_value_match");
    const all = asArray(at(h, "headers"), "headers").every((m) => headerMatches(asObject(m, "header"), req));
    const expect = h.expect_match !== false;
    return all === expect
      ? `${String(h.descriptor_key ?? "header_match")}=${String(at(h, "descriptor_value"))}`
      : undefined;
  }
  throw new Error(`unsupported rate limit action ${JSON.stringify(Object.keys(action))}`);
}

/** The real rules of envoy/config/ (the compose and Istio deployments load these). */
export async function edgeRuleSet(): Promise<RuleSet> {
  return (await loadConfig(join(repo, "envoy/config"), { schema: FULL_SCHEMA })).ruleSet;
}

/**
 * The config path of the rule tollgate applies to a descriptor sent as `["k=v", …]` in domain `edge`
 * (the `rule` label of `tollgate_decisions_total`), or undefined when no rule limits it.
 */
export function rulePathFor(ruleSet: RuleSet, entries: readonly string[]): string | undefined {
  const domain = ruleSet.domains.get("edge");
  if (domain === undefined) throw new Error("no domain edge in envoy/config");
  const parsed = entries.map((e) => {
    const eq = e.indexOf("=");
    return { key: e.slice(0, eq), value: e.slice(eq + 1) };
  });
  const rule = matchDescriptor(domain, parsed)?.rule;
  return rule !== undefined && rule.limits.length > 0 ? rule.path : undefined;
}
