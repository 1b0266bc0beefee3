/**
 * What the wire-compatibility tests of tollgate's own protos (test/protocol/ext-authz/ and rlqs/
 * wire-compat.test.ts) share: the official Envoy API registry, loaded before a file's tests, and the
 * shape of a message's fields that decides wire and JSON compatibility.
 */
import type { DescMessage } from "@bufbuild/protobuf";
import { beforeAll } from "vitest";
import { envoyRegistry } from "./envoy-protos.js";

export type OfficialRegistry = Awaited<ReturnType<typeof envoyRegistry>>;

/**
 * Call once per test file: the official registry (envoy-protos.ts), loaded in a `beforeAll` (the
 * first `buf build` may take a minute), for the file's tests to read.
 */
export function officialRegistry(): () => OfficialRegistry {
  let official: OfficialRegistry | undefined;
  beforeAll(async () => {
    official = await envoyRegistry();
  }, 120_000);
  return () => {
    if (official === undefined) throw new Error("the official registry is not loaded");
    return official;
  };
}

/** Name, number, kind, type (a map's key and value types) and oneof of every field of `m`. */
export function fieldShape(m: DescMessage): string[] {
  return m.fields.map((f) => {
    const type = f.message?.typeName ?? f.enum?.typeName ?? String(f.scalar ?? "");
    const mapValue =
      f.fieldKind === "map" ? `<${String(f.mapKey)},${f.message?.typeName ?? String(f.scalar)}>` : "";
    return `${f.number} ${f.name} ${f.fieldKind} ${type}${mapValue} oneof=${f.oneof?.name ?? "-"}`;
  });
}
