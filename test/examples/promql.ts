/**
 * Metric names referenced by a PromQL expression, and the names tollgate's registry defines, so the
 * alert rules and the dashboard can be checked against src/metrics/. The scan is lexical and covers
 * the PromQL the files use: strings, label matchers, grouping clauses, ranges, offsets and Grafana
 * variables are removed; a word before `(` is a function; what remains are metric names.
 */
import { TollgateMetrics } from "../../src/metrics/metrics.js";

const KEYWORDS = new Set([
  "and",
  "or",
  "unless",
  "bool",
  "by",
  "without",
  "on",
  "ignoring",
  "offset",
  "inf",
  "nan",
]);

export function metricNames(expr: string): Set<string> {
  const stripped = expr
    .replace(/"(?:[^"\\]|\\.)*"/g, " ")
    .replace(/\{[^}]*\}/g, " ")
    .replace(/\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, " ")
    .replace(/\[[^\]]*\]/g, " ")
    .replace(/\boffset\s+\S+/g, " ")
    .replace(/\$\{?\w+\}?/g, " ");
  const names = new Set<string>();
  for (const m of stripped.matchAll(/([A-Za-z_:][A-Za-z0-9_:]*)\s*(\()?/g)) {
    const [, word = "", call] = m;
    if (call !== undefined || KEYWORDS.has(word.toLowerCase()) || /^\d/.test(word)) continue;
    names.add(word);
  }
  return names;
}

/** Every series name tollgate exposes, histogram and summary suffixes and process metrics included. */
export async function definedNames(): Promise<Set<string>> {
  const metrics = new TollgateMetrics();
  const names = new Set<string>();
  for (const m of await metrics.registry.getMetricsAsJSON()) {
    names.add(m.name);
    const type = String(m.type);
    if (type === "histogram") for (const s of ["_bucket", "_sum", "_count"]) names.add(m.name + s);
    if (type === "summary") for (const s of ["_sum", "_count"]) names.add(m.name + s);
  }
  return names;
}
