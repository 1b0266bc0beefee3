/**
 * The `rlqs` config section (docs/rlqs.md): per domain, how an Envoy rate limit quota BucketId
 * becomes a descriptor of the domain's rule tree, and the assignment timing and fairness knobs.
 * Types, unknown keys and positions are the schema walker's job; this file checks the rest and
 * compiles a frozen {@link RlqsDomain} per domain, reporting each problem with file, line, column
 * and YAML path.
 *
 * ```yaml
 * rlqs:
 *   keys:                      # BucketId keys, in descriptor order
 *     - key: tenant
 *     - key: route_class
 *       required: false        # default true
 *   assignment_ttl: 10s        # whole seconds (Envoy reads seconds only)
 *   reporting_interval: 1s     # as configured in Envoy's bucket settings (>= 100ms)
 *   idle_intervals: 10         # abandon a bucket after this many intervals without a report
 *   min_share_percent: 10      # an Envoy's floor, in % of an equal split
 *   reassign_percent: 10       # re-send an increase only when it is at least this % of the rate
 * ```
 */
import type { RlqsDomain, RlqsKey, RlqsRules } from "../../engine/rlqs/types.js";
import type { LoadResult, ParsedDocument } from "../document.js";
import { ConfigError, type ConfigProblem } from "../errors.js";
import { bool, child, count, has, items, type Row, text } from "../fields.js";
import type { FieldDef } from "../schema.js";
import { type CheckedObject, childPath } from "../walk.js";

const R = "rlqs";
const percent = { kind: "uint", min: 0, max: 100 } as const;

/** The section's rows by name; the checks read values through them (../fields.ts). */
const RLQS_ROWS = {
  section: { name: "rlqs", in: ["root"], type: { kind: "object", context: R } },
  keys: { name: "keys", in: [R], type: { kind: "list", context: `${R}_key` }, required: true },
  assignment_ttl: { name: "assignment_ttl", in: [R], type: { kind: "duration" } },
  reporting_interval: { name: "reporting_interval", in: [R], type: { kind: "duration" } },
  idle_intervals: { name: "idle_intervals", in: [R], type: { kind: "uint", min: 1, max: 1000 } },
  min_share_percent: { name: "min_share_percent", in: [R], type: percent },
  reassign_percent: { name: "reassign_percent", in: [R], type: percent },
  key: { name: "key", in: [`${R}_key`], type: { kind: "string" }, required: true },
  required: { name: "required", in: [`${R}_key`], type: { kind: "bool" } },
} as const satisfies Record<string, FieldDef>;

/** Schema rows of the section. */
export const RLQS_SCHEMA_ROWS: readonly FieldDef[] = Object.freeze(Object.values(RLQS_ROWS));

/** Defaults of the section's optional keys. */
export const RLQS_DEFAULTS = Object.freeze({
  ttlMs: 10_000,
  reportingIntervalMs: 1_000,
  idleIntervals: 10,
  minSharePercent: 10,
  reassignPercent: 10,
});

/** Envoy refuses a reporting interval of 100 ms or less. */
const MIN_REPORTING_MS = 100;

function problem(
  file: string,
  problems: ConfigProblem[],
  o: CheckedObject,
  k: string | undefined,
  message: string,
): void {
  const pos = (k === undefined ? undefined : o.valuePos.get(k)) ?? o.pos;
  const path = k === undefined ? o.path : childPath(o.path, k);
  problems.push({ file, line: pos.line, column: pos.column, path, message });
}

function keysOf(file: string, problems: ConfigProblem[], s: CheckedObject): RlqsKey[] | undefined {
  const list = items(s, RLQS_ROWS.keys) ?? [];
  if (has(s, RLQS_ROWS.keys) && list.length === 0) {
    problem(file, problems, s, "keys", "must list at least one key");
    return undefined;
  }
  const seen = new Set<string>();
  const keys: RlqsKey[] = [];
  let ok = true;
  for (const item of list) {
    const key = text(item, RLQS_ROWS.key);
    if (key === undefined) {
      ok = false;
      continue;
    }
    if (key === "") {
      problem(file, problems, item, "key", "must not be empty (Envoy refuses empty BucketId keys)");
      ok = false;
    } else if (seen.has(key)) {
      problem(file, problems, item, "key", `duplicate key ${JSON.stringify(key)}`);
      ok = false;
    }
    seen.add(key);
    keys.push(Object.freeze({ key, required: bool(item, RLQS_ROWS.required) !== false }));
  }
  return ok && has(s, RLQS_ROWS.keys) ? keys : undefined;
}

/** Check and compile one document's section; undefined when it has problems (reported). */
function compileSection(
  file: string,
  domain: string,
  s: CheckedObject,
  problems: ConfigProblem[],
): RlqsDomain | undefined {
  const before = problems.length;
  const keys = keysOf(file, problems, s);
  const num = (row: Row<{ readonly kind: "uint" } | { readonly kind: "duration" }>, d: number) =>
    count(s, row) ?? d;
  const ttlMs = num(RLQS_ROWS.assignment_ttl, RLQS_DEFAULTS.ttlMs);
  const reportingIntervalMs = num(RLQS_ROWS.reporting_interval, RLQS_DEFAULTS.reportingIntervalMs);
  if (ttlMs % 1000 !== 0)
    problem(
      file,
      problems,
      s,
      "assignment_ttl",
      "must be whole seconds: Envoy reads only the seconds of a TTL",
    );
  if (reportingIntervalMs <= MIN_REPORTING_MS)
    problem(file, problems, s, "reporting_interval", "must be more than 100ms, as Envoy requires");
  if (ttlMs < 2 * reportingIntervalMs)
    problem(
      file,
      problems,
      s,
      "assignment_ttl",
      `must be at least two reporting intervals (${2 * reportingIntervalMs}ms), so an assignment is renewed before it expires`,
    );
  const minSharePercent = num(RLQS_ROWS.min_share_percent, RLQS_DEFAULTS.minSharePercent);
  if (keys === undefined || problems.length > before) return undefined;
  const line = s.pos.line;
  return Object.freeze({
    domain,
    keys: Object.freeze(keys),
    ttlMs,
    reportingIntervalMs,
    idleIntervals: num(RLQS_ROWS.idle_intervals, RLQS_DEFAULTS.idleIntervals),
    minShare: minSharePercent / 100,
    reassignThreshold: num(RLQS_ROWS.reassign_percent, RLQS_DEFAULTS.reassignPercent) / 100,
    source: Object.freeze({ file, line }),
  });
}

/** Compile the `rlqs` sections of validated documents, appending every problem to `problems`. */
export function compileRlqs(documents: readonly ParsedDocument[], problems: ConfigProblem[]): RlqsRules {
  const out = new Map<string, RlqsDomain>();
  for (const doc of documents) {
    const section = doc.root === undefined ? undefined : child(doc.root, RLQS_ROWS.section);
    if (section === undefined || doc.domain === undefined) continue;
    const compiled = compileSection(doc.file, doc.domain.domain, section, problems);
    if (compiled !== undefined) out.set(compiled.domain, compiled);
  }
  return out;
}

/** The RLQS settings of a successful config load; throws ConfigError with every problem. */
export function rlqsRulesOf(load: LoadResult): RlqsRules {
  const problems: ConfigProblem[] = [];
  const rules = compileRlqs(load.documents, problems);
  if (problems.length > 0) throw new ConfigError(problems);
  return rules;
}

/** `/rlconfig` lines of the sections, e.g. `edge.rlqs: keys=tenant,route_class? ttl=10s …`, sorted. */
export function describeRlqs(rules: RlqsRules): string[] {
  return [...rules.values()]
    .map(
      (d) =>
        `${d.domain}.rlqs: keys=${d.keys.map((k) => `${k.key}${k.required ? "" : "?"}`).join(",")} ttl=${d.ttlMs}ms reporting_interval=${d.reportingIntervalMs}ms idle_intervals=${d.idleIntervals} min_share=${Math.round(d.minShare * 100)}% reassign=${Math.round(d.reassignThreshold * 100)}%`,
    )
    .sort();
}
