/**
 * Loads config from one file or a directory of `*.yaml` / `*.yml`.
 *
 * In a directory, names starting with `.` are skipped, which covers dotfiles and the `..data` /
 * `..2024_01_01…` directories of a Kubernetes ConfigMap mount; the top-level `edge.yaml ->
 * ..data/edge.yaml` symlinks a mount presents are followed like files. Other subdirectories are
 * read recursively, in sorted order, each real directory once.
 */
import { readdir, readFile, realpath, stat } from "node:fs/promises";
import { extname, join } from "node:path";
import {
  buildRuleSet,
  type LoadResult,
  type ParsedDocument,
  type ParseOptions,
  readDocument,
} from "./document.js";
import { ConfigError, type ConfigProblem } from "./errors.js";

export { type LoadResult, type ParsedDocument, type ParseOptions, parseConfigText } from "./document.js";

/** Options of `loadConfig`: the same as a text parse. */
export type LoadOptions = ParseOptions;

const CONFIG_EXTENSIONS = new Set([".yaml", ".yml"]);

function problemOf(file: string, err: unknown): ConfigProblem {
  const reason = err instanceof Error ? err.message : String(err);
  return { file, line: 0, column: 0, path: "", message: `cannot read: ${reason}` };
}

/** Config files under `dir`, sorted, following symlinks, skipping `.`-prefixed names. */
async function listFiles(dir: string, seen: Set<string>, problems: ConfigProblem[]): Promise<string[]> {
  const real = await realpath(dir);
  if (seen.has(real)) return [];
  seen.add(real);
  const names = (await readdir(dir)).filter((n) => !n.startsWith(".")).sort();
  const files: string[] = [];
  for (const name of names) {
    const path = join(dir, name);
    try {
      const info = await stat(path);
      if (info.isDirectory()) files.push(...(await listFiles(path, seen, problems)));
      else if (info.isFile() && CONFIG_EXTENSIONS.has(extname(name).toLowerCase())) files.push(path);
    } catch (err) {
      problems.push(problemOf(path, err));
    }
  }
  return files;
}

/**
 * Load, validate and compile the config at `path` (a file or a directory).
 * Throws ConfigError listing every problem of every file (unreadable files included).
 */
export async function loadConfig(path: string, opts: LoadOptions = {}): Promise<LoadResult> {
  const problems: ConfigProblem[] = [];
  let files: string[];
  try {
    files = (await stat(path)).isDirectory() ? await listFiles(path, new Set(), problems) : [path];
  } catch (err) {
    throw new ConfigError([problemOf(path, err)]);
  }
  const documents: ParsedDocument[] = [];
  for (const file of files) {
    let text: string;
    try {
      text = await readFile(file, "utf8");
    } catch (err) {
      problems.push(problemOf(file, err));
      continue;
    }
    documents.push(readDocument(file, text, opts, problems));
  }
  if (files.length === 0 && problems.length === 0) {
    problems.push({
      file: path,
      line: 0,
      column: 0,
      path: "",
      message: "no *.yaml or *.yml config files found",
    });
  }
  return buildRuleSet(documents, problems);
}
