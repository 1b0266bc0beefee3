/**
 * The `ext_authz` config section: per domain, how tollgate's ext_authz Check builds descriptors from
 * the request (docs/ext-authz.md). Plugs into the table-driven schema with `EXT_AUTHZ_SCHEMA_ROWS`
 * (types, unknown keys, positions are the walker's job) and checks the rest here, reporting every
 * problem with file, line, column and YAML path, then compiles frozen `ExtAuthzRules`.
 *
 * Wiring: validate with `EXT_AUTHZ_SCHEMA` (or `extendSchema(base, EXT_AUTHZ_SCHEMA_ROWS)` to combine
 * with other sections), then call `compileExtAuthz(documents, problems)` between `readDocument` and
 * `buildRuleSet` so that its problems are reported with the rest of the load
 * (`parseExtAuthzConfigTexts` does this), or `extAuthzRulesOf(loadResult)` after `loadConfig`.
 *
 * One file over 300 lines by design: the section's schema table, checks and compile are one concept.
 */
import {
  compilePathGlob,
  type RouteClassRow,
  type RouteClassTable,
} from "../../engine/extract/route-class.js";
import type {
  DescriptorRule,
  DomainExtraction,
  ExtAuthzRules,
  ValueSource,
} from "../../engine/extract/rules.js";
import type { LoadResult, ParsedDocument } from "../document.js";
import { ConfigError, type ConfigProblem } from "../errors.js";
import { bool, child, count, flag, has, items, type Row, text } from "../fields.js";
import { type CheckedObject, childPath } from "../walk.js";

import { EXT_AUTHZ_ROWS } from "./ext-authz-schema.js";

export { EXT_AUTHZ_SCHEMA, EXT_AUTHZ_SCHEMA_ROWS } from "./ext-authz-schema.js";

/** Entry keys that name a value source; an entry has exactly one. */
const SOURCES = [
  "header",
  "jwt_claim",
  "source_ip",
  "source_subnet",
  "route_class",
  "context_extension",
  "literal",
  "raw_path",
] as const;

const HTTP_TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

const R = EXT_AUTHZ_ROWS;
type StringRow = Row<{ readonly kind: "string" }>;

/** Checks and compiles the section of one file. */
class SectionChecker {
  readonly #file: string;
  readonly #problems: ConfigProblem[];
  constructor(file: string, problems: ConfigProblem[]) {
    this.#file = file;
    this.#problems = problems;
  }

  problem(o: CheckedObject, k: string | undefined, message: string): void {
    const pos = (k === undefined ? undefined : o.valuePos.get(k)) ?? o.pos;
    const path = k === undefined ? o.path : childPath(o.path, k);
    this.#problems.push({ file: this.#file, line: pos.line, column: pos.column, path, message });
  }

  /** A header name: lower-cased, a valid token, never `:path` (use `raw_path` for that). */
  headerName(o: CheckedObject, row: StringRow): string | undefined {
    const k = row.name;
    const raw = text(o, row);
    if (raw === undefined) return undefined;
    const name = raw.toLowerCase();
    if (name === ":path") {
      this.problem(o, k, 'must not be ":path": raw paths become bucket keys only through raw_path');
    } else if (!HTTP_TOKEN.test(name.startsWith(":") ? name.slice(1) : name)) {
      this.problem(o, k, `must be an HTTP header name, got ${JSON.stringify(raw)}`);
    } else return name;
    return undefined;
  }

  nonEmpty(o: CheckedObject, row: StringRow): string | undefined {
    const v = text(o, row);
    if (v === "") this.problem(o, row.name, "must not be empty");
    return v === "" ? undefined : v;
  }

  section(s: CheckedObject, domain: string): DomainExtraction {
    const list = items(s, R.descriptors) ?? [];
    if (has(s, R.descriptors) && list.length === 0)
      this.problem(s, "descriptors", "must list at least one descriptor");
    const descriptors: DescriptorRule[] = [];
    for (const d of list) {
      const entries = items(d, R.entries) ?? [];
      if (has(d, R.entries) && entries.length === 0)
        this.problem(d, "entries", "must list at least one entry");
      const compiled = entries.map((e) => this.entry(e));
      const ok = compiled.every((e) => e !== undefined);
      if (ok && entries.length > 0) {
        descriptors.push(Object.freeze({ entries: Object.freeze(compiled), required: flag(d, R.required) }));
      }
    }
    return Object.freeze({ domain, descriptors: Object.freeze(descriptors) });
  }

  entry(e: CheckedObject): { key: string; source: ValueSource } | undefined {
    const key = this.nonEmpty(e, R.key);
    const present = SOURCES.filter((k) => has(e, R[k]));
    if (present.length !== 1) {
      const message =
        present.length === 0
          ? `needs one value source (${SOURCES.join(", ")})`
          : `has ${present.length} value sources (${present.join(", ")}): use exactly one`;
      this.problem(e, undefined, message);
      return undefined;
    }
    const source = this.source(e, present[0] as (typeof SOURCES)[number]);
    return key === undefined || source === undefined
      ? undefined
      : Object.freeze({ key, source: Object.freeze(source) });
  }

  source(e: CheckedObject, kind: (typeof SOURCES)[number]): ValueSource | undefined {
    switch (kind) {
      case "header": {
        const name = this.headerName(e, R.header);
        return name === undefined ? undefined : { kind, name };
      }
      case "context_extension": {
        const name = this.nonEmpty(e, R.context_extension);
        return name === undefined ? undefined : { kind, name };
      }
      case "literal": {
        const value = this.nonEmpty(e, R.literal);
        return value === undefined ? undefined : { kind, value };
      }
      case "source_ip":
        if (bool(e, R.source_ip) === false) this.problem(e, kind, "must be true (or leave it out)");
        return flag(e, R.source_ip) ? { kind } : undefined;
      case "source_subnet": {
        const s = child(e, R.source_subnet);
        if (s === undefined) return undefined;
        return { kind, ipv4Prefix: count(s, R.ipv4_prefix) ?? 24, ipv6Prefix: count(s, R.ipv6_prefix) ?? 56 };
      }
      case "raw_path": {
        const r = child(e, R.raw_path);
        return r === undefined ? undefined : { kind, includeQuery: flag(r, R.include_query) };
      }
      case "jwt_claim":
        return this.jwt(child(e, R.jwt_claim));
      case "route_class": {
        const table = this.routeTable(child(e, R.route_class));
        return table === undefined ? undefined : { kind, table };
      }
    }
  }

  jwt(j: CheckedObject | undefined): ValueSource | undefined {
    if (j === undefined) return undefined;
    const claim = this.nonEmpty(j, R.claim);
    const claimPath = claim?.split(".") ?? [];
    if (claimPath.some((p) => p === ""))
      this.problem(j, "claim", `has an empty segment: ${JSON.stringify(claim)}`);
    const claimHeader =
      text(j, R.claim_header) !== undefined ? this.headerName(j, R.claim_header) : undefined;
    const tokenHeader =
      text(j, R.token_header) !== undefined ? this.headerName(j, R.token_header) : "authorization";
    const payloadMetadataKey = this.nonEmpty(j, R.payload_metadata);
    const metadataNamespace = this.nonEmpty(j, R.metadata_namespace) ?? "envoy.filters.http.jwt_authn";
    const decodeToken = bool(j, R.decode_token) !== false;
    if (!decodeToken && claimHeader === undefined && payloadMetadataKey === undefined) {
      this.problem(
        j,
        "decode_token",
        "is false but neither claim_header nor payload_metadata is set: no claim could be read",
      );
    }
    if (claim === undefined || claimPath.some((p) => p === "") || tokenHeader === undefined) return undefined;
    return {
      kind: "jwt_claim",
      claim,
      claimPath: Object.freeze(claimPath),
      claimHeader,
      payloadMetadataKey,
      metadataNamespace,
      tokenHeader,
      decodeToken,
    };
  }

  routeTable(t: CheckedObject | undefined): RouteClassTable | undefined {
    if (t === undefined) return undefined;
    const defaultClass = this.nonEmpty(t, R.default_class);
    const list = items(t, R.routes) ?? [];
    if (list.length === 0 && defaultClass === undefined)
      this.problem(t, undefined, "needs routes or a default class");
    const rows = list.map((r) => this.route(r));
    if (!rows.every((r) => r !== undefined)) return undefined;
    return Object.freeze({ rows: Object.freeze(rows), defaultClass });
  }

  route(r: CheckedObject): RouteClassRow | undefined {
    const className = this.nonEmpty(r, R.class);
    const prefix = text(r, R.prefix);
    const glob = text(r, R.path);
    let ok = className !== undefined;
    if ((prefix === undefined) === (glob === undefined)) {
      this.problem(r, undefined, 'needs exactly one of "prefix" and "path" (a glob)');
      ok = false;
    }
    for (const row of [R.prefix, R.path]) {
      const v = text(r, row);
      if (v !== undefined && !v.startsWith("/")) {
        this.problem(r, row.name, `must start with "/", got ${JSON.stringify(v)}`);
        ok = false;
      }
    }
    const methods = (text(r, R.methods) ?? "").split(/[\s,]+/).filter((m) => m !== "");
    for (const m of methods) {
      if (!HTTP_TOKEN.test(m)) {
        this.problem(r, "methods", `${JSON.stringify(m)} is not an HTTP method (write e.g. "GET, HEAD")`);
        ok = false;
      }
    }
    if (!ok || className === undefined) return undefined;
    return Object.freeze({
      methods: new Set(methods.map((m) => m.toUpperCase())),
      prefix,
      glob: glob === undefined ? undefined : compilePathGlob(glob),
      className,
    });
  }
}

/** Options of `compileExtAuthz`. */
export interface ExtAuthzCompileOptions {
  /** Longest entry value in UTF-8 bytes (the RLS input bound). @default 256 */
  readonly maxValueBytes?: number;
}

/**
 * Check and compile the `ext_authz` sections of validated documents, appending every problem to
 * `problems`. The result is frozen; it is only meaningful when no problem was added.
 */
export function compileExtAuthz(
  documents: readonly ParsedDocument[],
  problems: ConfigProblem[],
  opts: ExtAuthzCompileOptions = {},
): ExtAuthzRules {
  const domains = new Map<string, DomainExtraction>();
  let defaultDomain: { name: string; file: string; line: number } | undefined;
  for (const doc of documents) {
    const section = doc.root === undefined ? undefined : child(doc.root, R.section);
    if (section === undefined || doc.domain === undefined) continue;
    const checker = new SectionChecker(doc.file, problems);
    domains.set(doc.domain.domain, checker.section(section, doc.domain.domain));
    if (!flag(section, R.default)) continue;
    if (defaultDomain !== undefined) {
      checker.problem(
        section,
        "default",
        `only one domain may be the ext_authz default ("${defaultDomain.name}" is, at ${defaultDomain.file}:${defaultDomain.line})`,
      );
    } else {
      defaultDomain = { name: doc.domain.domain, file: doc.file, line: section.pos.line };
    }
  }
  // With a single ext_authz domain, it is the default.
  const only = domains.size === 1 ? [...domains.keys()][0] : undefined;
  return Object.freeze({
    domains,
    defaultDomain: defaultDomain?.name ?? only,
    maxValueBytes: opts.maxValueBytes ?? 256,
  });
}

/**
 * The ext_authz rules of a finished load (`loadConfig` with `schema: EXT_AUTHZ_SCHEMA`). Throws
 * ConfigError with every section problem. Use this where the loader cannot run the section between
 * `readDocument` and `buildRuleSet`; the section's problems then follow the other ones.
 */
export function extAuthzRulesOf(load: LoadResult, opts: ExtAuthzCompileOptions = {}): ExtAuthzRules {
  const problems: ConfigProblem[] = [];
  const rules = compileExtAuthz(load.documents, problems, opts);
  if (problems.length > 0) throw new ConfigError(problems);
  return rules;
}
