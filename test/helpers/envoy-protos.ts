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
 * - the bundled envoy-api predates the rate limit fields of Envoy 1.33–1.38 that envoy/ai-gateway.yaml
 *   uses; a copy of envoy-api gets them (see {@link RATE_LIMIT_PATCHES}).
 */
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { cp, mkdir, readdir, readFile, rename, rm, symlink, writeFile } from "node:fs/promises";
import { dirname, join, relative, resolve } from "node:path";
import { promisify } from "node:util";
import { createFileRegistry, fromBinary, fromJson, type JsonValue, type Registry } from "@bufbuild/protobuf";
import { FileDescriptorSetSchema } from "@bufbuild/protobuf/wkt";

const run = promisify(execFile);
const repo = resolve(import.meta.dirname, "../..");
const deps = join(repo, "node_modules/@grpc/grpc-js-xds/deps");
/** Bump when the selection or patch logic changes, so stale caches are rebuilt. */
const RECIPE = 2;

/**
 * Rate limit fields newer than the bundled envoy-api, added to the copy (anchor text → text after it):
 * - route `RateLimit.hits_addend` (field 5, message `HitsAddend { UInt64Value number = 1; string
 *   format = 2; }`, Envoy 1.33) and `RateLimit.apply_on_stream_done` (field 6, bool, Envoy 1.33);
 * - `HitsAddend.is_negative_hits` (bool, Envoy 1.38; field 3 here — JSON decoding goes by name);
 * - `RateLimitDescriptor.hits_addend` (field 3, UInt64Value) and `is_negative_hits` (field 4, bool,
 *   Envoy 1.38) in envoy.extensions.common.ratelimit.v3.
 */
const RATE_LIMIT_PATCHES: readonly { file: string; anchor: string; insert: string }[] = [
  {
    file: "envoy/config/route/v3/route_components.proto",
    anchor: "  Override limit = 4;",
    insert: [
      "",
      "  message HitsAddend {",
      "    google.protobuf.UInt64Value number = 1;",
      "    string format = 2;",
      "    bool is_negative_hits = 3;",
      "  }",
      "",
      "  HitsAddend hits_addend = 5;",
      "",
      "  bool apply_on_stream_done = 6;",
      "",
    ].join("\n"),
  },
  {
    file: "envoy/extensions/common/ratelimit/v3/ratelimit.proto",
    anchor: "  RateLimitOverride limit = 2;",
    insert: "\n\n  google.protobuf.UInt64Value hits_addend = 3;\n\n  bool is_negative_hits = 4;",
  },
];

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
  for (const [name, dir] of Object.entries(ROOTS))
    if (name === "envoy-api") await cp(dir, join(work, name), { recursive: true });
    else await symlink(dir, join(work, name));
  for (const patch of RATE_LIMIT_PATCHES) {
    const path = join(work, "envoy-api", patch.file);
    const text = await readFile(path, "utf8");
    if (text.includes(patch.insert)) continue;
    if (!text.includes(patch.anchor)) throw new Error(`${patch.file} changed: revisit RATE_LIMIT_PATCHES`);
    const wrappers = 'import "google/protobuf/wrappers.proto";';
    let patched = text.replace(patch.anchor, `${patch.anchor}${patch.insert}`);
    if (!patched.includes(wrappers)) patched = patched.replace(/^import /m, `${wrappers}\nimport `);
    await writeFile(path, patched);
  }
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
