/**
 * Config errors. Every problem found in one load is collected (never stop at the first) and each
 * names the file, line, column and YAML path, e.g.
 * `config/edge.yaml:12:7: descriptors[0].rate_limit.unit: unknown unit "minutes" (use second, minute, hour, day, week, month or year)`.
 */

export interface ConfigProblem {
  readonly file: string;
  /** 1-based; 0 when the problem is not tied to a position (e.g. an unreadable file). */
  readonly line: number;
  /** 1-based; 0 when unknown. */
  readonly column: number;
  /** YAML path such as `descriptors[0].descriptors[1].rate_limit.unit`; `""` for the document. */
  readonly path: string;
  readonly message: string;
}

export function formatProblem(p: ConfigProblem): string {
  const where = p.line > 0 ? `${p.file}:${p.line}:${p.column}` : p.file;
  return p.path === "" ? `${where}: ${p.message}` : `${where}: ${p.path}: ${p.message}`;
}

/** Thrown by a config load with every problem found. */
export class ConfigError extends Error {
  readonly problems: readonly ConfigProblem[];
  constructor(problems: readonly ConfigProblem[]) {
    super(
      `invalid config (${problems.length} problem${problems.length === 1 ? "" : "s"}):\n${problems.map((p) => `  ${formatProblem(p)}`).join("\n")}`,
    );
    this.name = "ConfigError";
    this.problems = problems;
  }
}
