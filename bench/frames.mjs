/**
 * Pre-encoded gRPC request frames for h2load, built with the OFFICIAL Envoy protos (the copy in
 * @grpc/grpc-js-xds deps/envoy-api, loaded by @grpc/proto-loader / protobufjs), so the bytes on the
 * wire are what Envoy sends, not what our own codec thinks Envoy sends.
 *
 * Traffic model: every request carries three descriptors, [remote_address=IP], [tenant=T] and
 * [tenant=T, route_class=R]. Scenarios:
 * - `hot`: one hot tenant (`hot`, route class `read`), a distinct client IP per connection;
 * - `tenants`: 10,000 tenants × 3 route classes; connection c in round r gets point
 *   (c + r·connections)·7919 mod 30,000 of that space (7919 is prime, so rounds walk the whole space).
 */
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import protoLoader from "@grpc/proto-loader";

const deps = join(dirname(createRequire(import.meta.url).resolve("@grpc/grpc-js-xds/package.json")), "deps");

/** Proto-loader options shared by the frame encoder and the response decoder. */
export const LOADER_OPTIONS = Object.freeze({ keepCase: true, longs: Number, enums: String, defaults: true });

/** The bench rule domain (bench/config). */
export const DOMAIN = "bench";
/** Service path of ShouldRateLimit. */
export const RLS_PATH = "/envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit";
export const TENANTS = 10_000;
export const ROUTE_CLASSES = Object.freeze(["read", "write", "export"]);

let method;

/** The ShouldRateLimit method definition from the official protos (serializers included). */
export function rlsMethod() {
  if (!method) {
    const def = protoLoader.loadSync("envoy/service/ratelimit/v3/rls.proto", {
      ...LOADER_OPTIONS,
      includeDirs: ["envoy-api", "googleapis", "xds", "protoc-gen-validate"].map((d) => join(deps, d)),
    });
    method = def["envoy.service.ratelimit.v3.RateLimitService"].ShouldRateLimit;
  }
  return method;
}

/** Wrap a protobuf message in a gRPC length-prefixed frame (uncompressed). */
export function grpcFrame(message) {
  const frame = Buffer.alloc(5 + message.length);
  frame.writeUInt32BE(message.length, 1);
  message.copy(frame, 5);
  return frame;
}

/** The request of one client: three descriptors for `tenant`/`route` from client address `ip`. */
export function requestFor({ tenant, route, ip }) {
  const entry = (key, value) => ({ key, value });
  return {
    domain: DOMAIN,
    descriptors: [
      { entries: [entry("remote_address", ip)] },
      { entries: [entry("tenant", tenant)] },
      { entries: [entry("tenant", tenant), entry("route_class", route)] },
    ],
    hits_addend: 1,
  };
}

/** A stable client IP for index `i` (10.x.y.z). */
function ipOf(i) {
  return `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`;
}

/**
 * The request each connection sends in one round of a scenario.
 * @param {{ scenario: "hot" | "tenants", connections: number, round: number }} opts
 * @returns {{ tenant: string, route: string, ip: string }[]} one entry per connection
 */
export function scenarioPoints({ scenario, connections, round }) {
  const points = [];
  const space = TENANTS * ROUTE_CLASSES.length;
  for (let c = 0; c < connections; c++) {
    if (scenario === "hot") {
      points.push({ tenant: "hot", route: "read", ip: ipOf(c + 1) });
      continue;
    }
    const n = ((c + round * connections) * 7919) % space;
    const t = Math.floor(n / ROUTE_CLASSES.length);
    points.push({ tenant: `t${t}`, route: ROUTE_CLASSES[n % ROUTE_CLASSES.length], ip: ipOf(t + 1) });
  }
  return points;
}

/** Encoded gRPC request frames, one per point. */
export function encodeFrames(points) {
  const { requestSerialize } = rlsMethod();
  return points.map((p) => grpcFrame(requestSerialize(requestFor(p))));
}

/** Decode a RateLimitResponse (the message after the 5-byte frame header). */
export function decodeResponse(frame) {
  return rlsMethod().responseDeserialize(frame.subarray(5));
}
