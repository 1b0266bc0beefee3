import { fromBinary } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { DOMAIN, encodeFrames, grpcFrame, ROUTE_CLASSES, scenarioPoints } from "../../bench/frames.mjs";
import { RateLimitRequestSchema } from "../../src/gen/envoy/service/ratelimit/v3/rls_pb.js";

const entries = (frame: Buffer) => {
  expect(frame[0]).toBe(0);
  expect(frame.readUInt32BE(1)).toBe(frame.length - 5);
  const req = fromBinary(RateLimitRequestSchema, frame.subarray(5));
  return { req, kv: req.descriptors.map((d) => d.entries.map((e) => `${e.key}=${e.value}`).join(",")) };
};

describe("bench request frames", () => {
  it("frames a message with a zero compressed flag and a big-endian length", () => {
    const frame = grpcFrame(Buffer.from([1, 2, 3]));
    expect([...frame]).toEqual([0, 0, 0, 0, 3, 1, 2, 3]);
  });

  it("encodes, with the official Envoy protos, requests our generated codec reads as three descriptors", () => {
    const [frame] = encodeFrames([{ tenant: "t7", route: "write", ip: "10.0.0.8" }]);
    const { req, kv } = entries(frame as Buffer);
    expect(req.domain).toBe(DOMAIN);
    expect(req.hitsAddend).toBe(1);
    expect(kv).toEqual(["remote_address=10.0.0.8", "tenant=t7", "tenant=t7,route_class=write"]);
  });

  it("sends one hot tenant on the read route from a distinct address per connection", () => {
    const points = scenarioPoints({ scenario: "hot", connections: 4, round: 0 });
    expect(new Set(points.map((p) => `${p.tenant}/${p.route}`))).toEqual(new Set(["hot/read"]));
    expect(new Set(points.map((p) => p.ip)).size).toBe(4);
  });

  it("walks distinct tenant-route pairs of the 10,000 × 3 space across connections and rounds", () => {
    const seen = new Set<string>();
    for (let round = 0; round < 50; round++) {
      for (const p of scenarioPoints({ scenario: "tenants", connections: 16, round })) {
        expect(ROUTE_CLASSES).toContain(p.route);
        expect(Number(p.tenant.slice(1))).toBeLessThan(10_000);
        seen.add(`${p.tenant}/${p.route}`);
      }
    }
    expect(seen.size).toBe(800);
    expect(new Set([...seen].map((s) => s.split("/")[1])).size).toBe(3);
  });
});
