/**
 * A protobuf-es registry of the OFFICIAL Envoy v3 API, so tests can decode envoy/*.yaml the way Envoy
 * would: proto3 JSON that rejects unknown fields, with every `typed_config` Any resolved by `@type`.
 *
 * The .proto files come from `@grpc/grpc-js-xds` (deps/envoy-api, googleapis, xds, protoc-gen-validate)
 * and are compiled once with `buf build` (offline) into a FileDescriptorSet cached under
 * node_modules/.cache. Two adjustments, both confined to the cache directory:
 * - only v3 files whose whole import closure is present are compiled (the package lacks the v2 API and
 *   the opencensus/opentelemetry/prometheus protos some tracer and stats files import);
 * - the bundled protoc-gen-validate `validate.proto` predates `StringRules.ignore_empty` (field 26),
 *   which envoy-api uses in options; it is added to a copy. Validation options never affect decoding.
 */
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, readdir, readFile, rename, rm, symlink, writeFile } from "node:fs/promises";
import { dirname, join, relative, resolve } from "node:path";
import { promisify } from "node:util";
import { createFileRegistry, fromBinary, fromJson, type JsonValue, type Registry } from "@bufbuild/protobuf";
import { FileDescriptorSetSchema } from "@bufbuild/protobuf/wkt";

const run = promisify(execFile);
const repo = resolve(import.meta.dirname, "../..");
const deps = join(repo, "node_modules/@grpc/grpc-js-xds/deps");
/** Bump when the selection or patch logic changes, so stale caches are rebuilt. */
const RECIPE = 1;

/** Import roots, as buf modules: directory name in the workspace → source directory. */
const ROOTS: Readonly<Record<string, string>> = {
  "envoy-api": join(deps, "envoy-api"),
  googleapis: join(deps, "googleapis"),
  xds: join(deps, "xds"),
};

async function protoFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries
    .filter((e) => e.isFile() && e.name.endsWith(".proto"))
    .map((e) => relative(dir, join(e.parentPath, e.name)));
}

/** Import paths of each file, across every root (and the patched validate.proto). */
async function importGraph(): Promise<Map<string, string[]>> {
  const graph = new Map<string, string[]>();
  const importRe = /^import\s+(?:public\s+|weak\s+)?"([^"]+)";/gm;
  for (const dir of Object.values(ROOTS)) {
    for (const file of await protoFiles(dir)) {
      const text = await readFile(join(dir, file), "utf8");
      graph.set(
        file,
        [...text.matchAll(importRe)].map((m) => m[1] ?? ""),
      );
    }
  }
  graph.set("validate/validate.proto", [
    "google/protobuf/descriptor.proto",
    "google/protobuf/duration.proto",
    "google/protobuf/timestamp.proto",
  ]);
  // Well-known types are built into buf.
  return graph;
}

/** Envoy v3 files whose import closure resolves. */
function compilable(graph: Map<string, string[]>): string[] {
  const ok = new Map<string, boolean>();
  const visit = (file: string, stack: Set<string>): boolean => {
    if (file.startsWith("google/protobuf/") && !graph.has(file)) return true;
    const known = ok.get(file);
    if (known !== undefined) return known;
    const imports = graph.get(file);
    if (imports === undefined) return false;
    if (stack.has(file)) return true;
    stack.add(file);
    const result = imports.every((i) => visit(i, stack));
    stack.delete(file);
    ok.set(file, result);
    return result;
  };
  return [...graph.keys()].filter((f) => f.startsWith("envoy/") && f.includes("/v3/") && visit(f, new Set()));
}

async function buildSet(out: string): Promise<void> {
  const work = `${out}.work-${process.pid}`;
  await rm(work, { recursive: true, force: true });
  await mkdir(join(work, "pgv/validate"), { recursive: true });
  for (const [name, dir] of Object.entries(ROOTS)) await symlink(dir, join(work, name));
  const validate = await readFile(join(deps, "protoc-gen-validate/validate/validate.proto"), "utf8");
  const strict = "  optional bool strict = 25 [default = true];";
  if (!validate.includes(strict)) throw new Error("validate.proto changed: revisit the ignore_empty patch");
  const patched = validate.includes("ignore_empty")
    ? validate
    : validate.replace(strict, `  optional bool ignore_empty = 26;\n${strict}`);
  await writeFile(join(work, "pgv/validate/validate.proto"), patched);
  const modules = ["envoy-api", "googleapis", "xds", "pgv"].map((p) => `  - path: ${p}`).join("\n");
  await writeFile(join(work, "buf.yaml"), `version: v2\nmodules:\n${modules}\n`);
  const files = compilable(await importGraph());
  const args = [
    "build",
    "-o",
    join(work, "set.binpb"),
    ...files.flatMap((f) => ["--path", `envoy-api/${f}`]),
  ];
  await run(join(repo, "node_modules/.bin/buf"), args, { cwd: work, maxBuffer: 16 * 1024 * 1024 });
  await rename(join(work, "set.binpb"), out); // atomic: parallel test files may build at once
  await rm(work, { recursive: true, force: true });
}

let cached: Promise<Registry> | undefined;

/** The registry of Envoy v3 messages (plus googleapis, xds, validate). Built once per process. */
export function envoyRegistry(): Promise<Registry> {
  cached ??= (async () => {
    const { version } = JSON.parse(await readFile(join(deps, "../package.json"), "utf8")) as {
      version: string;
    };
    const out = join(
      repo,
      "node_modules/.cache/tollgate-envoy-protos",
      `grpc-js-xds-${version}-r${RECIPE}.binpb`,
    );
    if (!existsSync(out)) {
      await mkdir(dirname(out), { recursive: true });
      await buildSet(out);
    }
    return createFileRegistry(fromBinary(FileDescriptorSetSchema, await readFile(out)));
  })();
  return cached;
}

/**
 * Decode proto3 JSON as message `typeName` (e.g. `envoy.config.bootstrap.v3.Bootstrap`), rejecting
 * unknown fields and resolving `Any` by `@type`. Throws with protobuf-es' message on any mismatch.
 */
export async function decodeEnvoyJson(typeName: string, json: JsonValue): Promise<unknown> {
  const registry = await envoyRegistry();
  const schema = registry.getMessage(typeName);
  if (!schema) throw new Error(`no message ${typeName} in the Envoy registry`);
  return fromJson(schema, json, { registry, ignoreUnknownFields: false });
}
