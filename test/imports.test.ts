/**
 * The dependency direction of src/ (docs/architecture.md, "Rules of the road"), read from the import
 * statements: the engine sees storage only through its ports, stores never reach into the protocol
 * or the config, the config reaches protocol/ and store/ only for the two pure encoders its
 * compile-time plans use, and only protocol/ (with those encoders' config step) loads generated code.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, posix } from "node:path";
import { describe, expect, it } from "vitest";

const SRC = join(import.meta.dirname, "..", "src");

function files(rel = ""): string[] {
  const out: string[] = [];
  for (const name of readdirSync(join(SRC, rel))) {
    const path = rel === "" ? name : `${rel}/${name}`;
    if (statSync(join(SRC, path)).isDirectory()) out.push(...files(path));
    else if (path.endsWith(".ts")) out.push(path);
  }
  return out;
}

/** Every relative import of `file` (posix, relative to src/), resolved to a src path ending in .ts. */
function importsOf(file: string, text: string): string[] {
  const out: string[] = [];
  for (const m of text.matchAll(/(?:^|\n)\s*(?:import|export)\b[^;]*?\bfrom\s+"(\.[^"]+)"/g)) {
    const spec = m[1] ?? "";
    out.push(posix.normalize(posix.join(posix.dirname(file), spec)).replace(/\.js$/, ".ts"));
  }
  return out;
}

/** Edges `from → to` that break a rule, with the rule. */
function violations(edges: readonly (readonly [string, string])[]): string[] {
  const top = (p: string) => p.split("/")[0] ?? "";
  const bad: string[] = [];
  for (const [from, to] of edges) {
    const a = top(from);
    const b = top(to);
    const edge = `${from} → ${to}`;
    if (a === "engine" && b === "store" && to !== "store/store.ts" && to !== "store/rlqs/board.ts")
      bad.push(`${edge}: the engine sees storage only through store/store.ts and store/rlqs/board.ts`);
    if (a === "engine" && ["protocol", "config", "metrics", "workers"].includes(b))
      bad.push(`${edge}: the engine depends on no outer layer`);
    if (a === "store" && ["protocol", "config", "workers"].includes(b))
      bad.push(`${edge}: stores never reach into the protocol, the config or the workers`);
    if (a === "store" && b === "metrics" && from !== "store/create.ts")
      bad.push(`${edge}: only the store factory (store/create.ts) wires metrics`);
    if (a === "config" && (b === "protocol" || b === "store")) {
      const allowed =
        from === "config/hot-path.ts" &&
        (to === "protocol/response-wire.ts" || to === "store/redis/resp-bulk.ts");
      if (!allowed)
        bad.push(
          `${edge}: config reaches protocol/ and store/ only from hot-path.ts, for the two pure encoders`,
        );
    }
    if (b === "gen" && a !== "protocol" && a !== "gen")
      bad.push(`${edge}: only protocol/ imports generated protobuf code`);
  }
  return bad;
}

describe("src dependency direction", () => {
  it("no import breaks a rule of the road", () => {
    const edges = files().flatMap((f) =>
      importsOf(f, readFileSync(join(SRC, f), "utf8")).map((to) => [f, to] as const),
    );
    expect(edges.length).toBeGreaterThan(300);
    expect(violations(edges)).toEqual([]);
  });

  it("names a broken rule (the check can fail)", () => {
    expect(violations([["engine/decide.ts", "store/redis/redis-store.ts"]])).toHaveLength(1);
    expect(violations([["store/memory/memory-store.ts", "protocol/rls.ts"]])).toHaveLength(1);
    expect(violations([["config/compile.ts", "protocol/response-wire.ts"]])).toHaveLength(1);
    expect(violations([["engine/decide.ts", "gen/envoy/x_pb.ts"]])).toHaveLength(1);
    expect(violations([["config/hot-path.ts", "store/redis/resp-bulk.ts"]])).toEqual([]);
  });
});
