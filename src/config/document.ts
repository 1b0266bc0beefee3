/**
 * One config text → validated document, and a set of documents → RuleSet. Pure and synchronous:
 * `load.ts` adds the file system, the CLI and tests call `parseConfigText` directly.
 */
import { LineCounter, parseDocument } from "yaml";
import type { Algorithm, RuleSet } from "../engine/types.js";
import { checkDocument } from "./check.js";
import { compileRuleSet } from "./compile.js";
import { ConfigError, type ConfigProblem } from "./errors.js";
import { BASE_SCHEMA, type ConfigSchema } from "./schema.js";
import type { DomainSpec } from "./spec.js";
import { type CheckedObject, SchemaWalker } from "./walk.js";

/** Options of a config parse or load. */
export interface ParseOptions {
  /** Algorithm of limits that do not set `algorithm`. @default "gcra" */
  readonly defaultAlgorithm?: Algorithm;
  /** Schema to validate against; pass `extendSchema(BASE_SCHEMA, rows)` to add sections. @default BASE_SCHEMA */
  readonly schema?: ConfigSchema;
}

/** One validated file. `root` gives extension sections their validated values. */
export interface ParsedDocument {
  readonly file: string;
  /** Undefined when the file is not YAML or not a map. */
  readonly root: CheckedObject | undefined;
  readonly domain: DomainSpec | undefined;
}

/** A successful parse or load. */
export interface LoadResult {
  readonly ruleSet: RuleSet;
  readonly documents: readonly ParsedDocument[];
}

/** YAML library messages end with " at line L, column C:" and a code frame: keep the sentence. */
function yamlMessage(message: string): string {
  const first = message.split("\n")[0] ?? message;
  return first.replace(/ at line \d+, column \d+:?$/, "");
}

/** Parse and validate one file's text, appending every problem to `problems`. */
export function readDocument(
  file: string,
  text: string,
  opts: ParseOptions,
  problems: ConfigProblem[],
): ParsedDocument {
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, prettyErrors: false, uniqueKeys: true });
  for (const e of doc.errors) {
    const at = lineCounter.linePos(e.pos[0]);
    problems.push({
      file,
      line: at.line,
      column: at.col,
      path: "",
      message: yamlMessage(e.message),
    });
  }
  if (doc.errors.length > 0) return { file, root: undefined, domain: undefined };
  const report = (pos: { line: number; column: number }, path: string, message: string) =>
    problems.push({ file, line: pos.line, column: pos.column, path, message });
  if (doc.contents === null) {
    problems.push({
      file,
      line: 0,
      column: 0,
      path: "",
      message: "file is empty (expected domain and descriptors)",
    });
    return { file, root: undefined, domain: undefined };
  }
  const walker = new SchemaWalker({ schema: opts.schema ?? BASE_SCHEMA, doc, lineCounter, report });
  const root = walker.object(doc.contents, "root", "");
  const domain =
    root === undefined
      ? undefined
      : checkDocument(root, { file, defaultAlgorithm: opts.defaultAlgorithm, report });
  return { file, root, domain };
}

/** Problems in file order, then by position within each file. */
function sortProblems(
  problems: readonly ConfigProblem[],
  documents: readonly ParsedDocument[],
): ConfigProblem[] {
  const order = new Map(documents.map((d, i) => [d.file, i]));
  const rank = (p: ConfigProblem) => order.get(p.file) ?? -1;
  return [...problems].sort((a, b) => rank(a) - rank(b) || a.line - b.line || a.column - b.column);
}

/** Check cross-file rules (unique domains), then compile; throws ConfigError with every problem. */
export function buildRuleSet(documents: readonly ParsedDocument[], problems: ConfigProblem[]): LoadResult {
  const byDomain = new Map<string, DomainSpec>();
  for (const { domain } of documents) {
    if (domain === undefined) continue;
    const first = byDomain.get(domain.domain);
    if (first !== undefined) {
      problems.push({
        file: domain.file,
        line: domain.line,
        column: domain.column,
        path: "domain",
        message: `duplicate domain "${domain.domain}" (first defined in ${first.file}:${first.line})`,
      });
      continue;
    }
    byDomain.set(domain.domain, domain);
  }
  if (problems.length > 0) throw new ConfigError(sortProblems(problems, documents));
  const ruleSet = compileRuleSet(
    [...byDomain.values()],
    documents.map((d) => d.file),
  );
  return Object.freeze({ ruleSet, documents: Object.freeze([...documents]) });
}

/** Parse, validate and compile one config text. Throws ConfigError listing every problem. */
export function parseConfigText(file: string, text: string, opts: ParseOptions = {}): LoadResult {
  const problems: ConfigProblem[] = [];
  return buildRuleSet([readDocument(file, text, opts, problems)], problems);
}
