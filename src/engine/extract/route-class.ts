/**
 * Route-class tables: method set + path prefix or glob → class name, first match wins, with an
 * optional default. The class name, not the path, becomes the descriptor value, so bucket keys stay
 * bounded whatever paths clients send.
 */

/** One compiled row of a route-class table. */
export interface RouteClassRow {
  /** Upper-case methods; empty matches every method. */
  readonly methods: ReadonlySet<string>;
  /** Exactly one of `prefix` and `glob` is set. */
  readonly prefix: string | undefined;
  readonly glob: RegExp | undefined;
  readonly className: string;
}

/** A compiled table. */
export interface RouteClassTable {
  readonly rows: readonly RouteClassRow[];
  /** Class when no row matches; undefined makes the value missing. */
  readonly defaultClass: string | undefined;
}

/**
 * Compile a path glob: `*` matches within one path segment (no `/`), `**` matches across segments;
 * everything else is literal. The whole path must match.
 */
export function compilePathGlob(glob: string): RegExp {
  const body = glob
    .split(/(\*\*|\*)/)
    .map((part) => {
      if (part === "**") return ".*";
      if (part === "*") return "[^/]*";
      return part.replace(/[\\^$.|?+()[\]{}]/g, "\\$&");
    })
    .join("");
  return new RegExp(`^${body}$`, "s");
}

/** The class of a request: the first row matching method and path, else the default. */
export function routeClass(table: RouteClassTable, method: string, path: string): string | undefined {
  const m = method.toUpperCase();
  for (const row of table.rows) {
    if (row.methods.size > 0 && !row.methods.has(m)) continue;
    const hit = row.prefix !== undefined ? path.startsWith(row.prefix) : row.glob?.test(path) === true;
    if (hit) return row.className;
  }
  return table.defaultClass;
}
