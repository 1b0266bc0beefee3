/**
 * A patched copy of the OFFICIAL envoy/extensions/common/ratelimit/v3/ratelimit.proto (from
 * @grpc/grpc-js-xds, which predates them) with the RateLimitDescriptor fields Envoy added later:
 * `hits_addend` (3, google.protobuf.UInt64Value) and `is_negative_hits` (4, bool, Envoy 1.38). The rest
 * of the file is Envoy's own, so a client loaded through it still proves wire compatibility.
 */
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";

const FILE = "envoy/extensions/common/ratelimit/v3/ratelimit.proto";
const ANCHOR = "  RateLimitOverride limit = 2;\n}";
const ADDED = `  RateLimitOverride limit = 2;

  // Added by the test (Envoy's later fields, same numbers and types).
  google.protobuf.UInt64Value hits_addend = 3;
  bool is_negative_hits = 4;
}`;

let dir: string | undefined;

/** The overlay directory for `createRlsClient(address, undefined, overlay)`; written once per process. */
export function ratelimitOverlay(): string {
  if (dir !== undefined) return dir;
  const deps = join(
    dirname(createRequire(import.meta.url).resolve("@grpc/grpc-js-xds/package.json")),
    "deps",
  );
  // The npm copy has CRLF line ends.
  const official = readFileSync(join(deps, "envoy-api", FILE), "utf8").replace(/\r\n/g, "\n");
  if (!official.includes(ANCHOR))
    throw new Error(`${FILE}: RateLimitDescriptor no longer ends with limit = 2`);
  if (official.includes("is_negative_hits"))
    throw new Error(`${FILE} has is_negative_hits: drop this overlay`);
  const patched = official
    .replace(ANCHOR, ADDED)
    .replace(
      'import "envoy/type/v3/ratelimit_unit.proto";',
      'import "envoy/type/v3/ratelimit_unit.proto";\nimport "google/protobuf/wrappers.proto";',
    );
  const out = mkdtempSync(join(tmpdir(), "tollgate-rls-overlay-"));
  mkdirSync(join(out, dirname(FILE)), { recursive: true });
  writeFileSync(join(out, FILE), patched);
  dir = out;
  return out;
}
