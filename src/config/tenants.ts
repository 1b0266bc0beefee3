/**
 * The tenants file (setting `--tenants`): tenant → tier, loaded at start and reloaded with the
 * config. Two formats, chosen by extension:
 *
 * - `*.csv`: one `tenant,tier` per line; an optional `tenant,tier` header line; blank lines and
 *   lines starting with `#` are skipped; fields are trimmed and not quoted (a tenant id cannot
 *   contain a comma).
 * - `*.yaml` / `*.yml`: one mapping, `tenant: tier`.
 *
 * Every row is checked (tier defined by some domain's `tiers` section, tenant listed once) and all
 * problems are reported at once with file and line, capped at {@link MAX_PROBLEMS}.
 */
import { readFile } from "node:fs/promises";
import { extname } from "node:path";
import { isMap, isScalar, LineCounter, parseDocument } from "yaml";
import { ConfigError, type ConfigProblem } from "./errors.js";

/** Problems listed before the rest are summarized in one line. */
export const MAX_PROBLEMS = 50;

/** Options of a tenants load. */
export interface TenantsOptions {
  /** Every tier name some domain defines; a row naming another tier is an error. */
  readonly knownTiers: ReadonlySet<string>;
}

/** Collects rows and problems of one file. */
class TenantTable {
  readonly tenants = new Map<string, string>();
  /** Tier names, so that every row shares one string per tier. */
  readonly #interned: ReadonlyMap<string, string>;
  readonly #known: string;
  readonly #problems: ConfigProblem[] = [];
  #dropped = 0;

  constructor(
    readonly file: string,
    opts: TenantsOptions,
  ) {
    this.#interned = new Map([...opts.knownTiers].map((t) => [t, t]));
    this.#known = [...opts.knownTiers].sort().join(", ") || "none";
  }

  problem(line: number, message: string): void {
    if (this.#problems.length < MAX_PROBLEMS) {
      this.#problems.push({ file: this.file, line, column: line > 0 ? 1 : 0, path: "", message });
    } else this.#dropped++;
  }

  add(tenant: string, tier: string, line: number): void {
    const interned = this.#interned.get(tier);
    let message: string | undefined;
    if (tenant === "") message = "empty tenant";
    else if (interned === undefined)
      message = `tenant "${tenant}": unknown tier "${tier}" (defined: ${this.#known})`;
    else if (this.tenants.has(tenant)) message = `duplicate tenant "${tenant}" (listed earlier)`;
    if (message !== undefined || interned === undefined) this.problem(line, message ?? "unknown tier");
    else this.tenants.set(tenant, interned);
  }

  /** The map, or throws ConfigError with every problem. */
  result(): Map<string, string> {
    if (this.#dropped > 0) this.#problems.push(this.#summary());
    if (this.#problems.length > 0) throw new ConfigError(this.#problems);
    return this.tenants;
  }

  #summary(): ConfigProblem {
    return {
      file: this.file,
      line: 0,
      column: 0,
      path: "",
      message: `… and ${this.#dropped} more problem(s)`,
    };
  }
}

/** Parse a CSV tenants text. Throws ConfigError listing the problems. */
export function parseTenantsCsv(file: string, text: string, opts: TenantsOptions): Map<string, string> {
  const table = new TenantTable(file, opts);
  let start = 0;
  let line = 0;
  let seenData = false;
  while (start <= text.length) {
    let end = text.indexOf("\n", start);
    if (end < 0) end = text.length;
    line++;
    const row = text.slice(start, end).trim();
    start = end + 1;
    if (row === "" || row.startsWith("#")) continue;
    const comma = row.indexOf(",");
    if (comma < 0 || row.indexOf(",", comma + 1) >= 0) {
      table.problem(line, `expected "tenant,tier", got ${JSON.stringify(row.slice(0, 80))}`);
      continue;
    }
    const tenant = row.slice(0, comma).trim();
    const tier = row.slice(comma + 1).trim();
    const header = !seenData && tenant.toLowerCase() === "tenant" && tier.toLowerCase() === "tier";
    seenData = true;
    if (!header) table.add(tenant, tier, line);
  }
  return table.result();
}

/** Parse a YAML tenants text (one `tenant: tier` mapping). Throws ConfigError listing the problems. */
export function parseTenantsYaml(file: string, text: string, opts: TenantsOptions): Map<string, string> {
  const table = new TenantTable(file, opts);
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines, uniqueKeys: false, prettyErrors: false });
  const lineOf = (offset: number | undefined) => (offset === undefined ? 0 : lines.linePos(offset).line);
  for (const e of doc.errors) table.problem(lineOf(e.pos[0]), e.message.split("\n")[0] ?? e.message);
  if (doc.errors.length > 0) return table.result();
  if (doc.contents === null) return table.result();
  if (!isMap(doc.contents)) {
    table.problem(lineOf(doc.contents.range?.[0]), "must be a map of tenant: tier");
    return table.result();
  }
  for (const pair of doc.contents.items) {
    const key = pair.key;
    const value = pair.value;
    const line = lineOf(isScalar(key) ? key.range?.[0] : undefined);
    if (!isScalar(key) || !isScalar(value) || value.value === null || typeof value.value === "object") {
      table.problem(line, "each entry must be tenant: tier (two scalars)");
      continue;
    }
    table.add(String(key.source ?? key.value), String(value.source ?? value.value), line);
  }
  return table.result();
}

/** Read and parse the tenants file at `path` (format by extension). Throws ConfigError. */
export async function loadTenants(path: string, opts: TenantsOptions): Promise<Map<string, string>> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (err) {
    const reason = err instanceof Error ? err.message : String(err);
    throw new ConfigError([{ file: path, line: 0, column: 0, path: "", message: `cannot read: ${reason}` }]);
  }
  const ext = extname(path).toLowerCase();
  if (ext === ".csv") return parseTenantsCsv(path, text, opts);
  if (ext === ".yaml" || ext === ".yml") return parseTenantsYaml(path, text, opts);
  throw new ConfigError([
    { file: path, line: 0, column: 0, path: "", message: "tenants file must end in .csv, .yaml or .yml" },
  ]);
}
