/** `is_negative_hits` (RateLimitDescriptor field 4) on gRPC and `/json` (`isNegativeHits`). */
import { create, toBinary } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { RateLimitRequestSchema } from "../../src/gen/envoy/service/ratelimit/v3/rls_pb.js";
import { DEFAULT_BOUNDS, decodeQuery, parseJsonQuery } from "../../src/protocol/codec.js";
import { GrpcError, Status } from "../../src/protocol/grpc/status.js";

const grpc = (hits: bigint, negative: boolean) =>
  decodeQuery(
    toBinary(
      RateLimitRequestSchema,
      create(RateLimitRequestSchema, {
        domain: "ai",
        descriptors: [
          { entries: [{ key: "tenant", value: "a" }], hitsAddend: hits, isNegativeHits: negative },
        ],
      }),
    ),
    DEFAULT_BOUNDS,
  );

function refusal(run: () => unknown): string {
  try {
    run();
  } catch (err) {
    expect(err).toBeInstanceOf(GrpcError);
    expect((err as GrpcError).code).toBe(Status.INVALID_ARGUMENT);
    return (err as GrpcError).message;
  }
  throw new Error("expected INVALID_ARGUMENT");
}

describe("is_negative_hits", () => {
  it("is decoded on gRPC beside the descriptor's hits_addend", () => {
    expect(grpc(700n, true).descriptors[0]).toMatchObject({ hitsAddend: 700, negativeHits: true });
    expect(grpc(700n, false).descriptors[0]).toMatchObject({ hitsAddend: 700, negativeHits: false });
  });

  it("is decoded on /json under its JSON name and its proto name", () => {
    const body = (field: string) =>
      JSON.stringify({
        domain: "ai",
        descriptors: [{ entries: [{ key: "tenant", value: "a" }], hitsAddend: "700", [field]: true }],
      });
    for (const field of ["isNegativeHits", "is_negative_hits"])
      expect(parseJsonQuery(body(field), DEFAULT_BOUNDS).descriptors[0]).toMatchObject({
        hitsAddend: 700,
        negativeHits: true,
      });
  });

  it("refuses a refund above Envoy's hits_addend bound with INVALID_ARGUMENT, on gRPC and /json", () => {
    expect(refusal(() => grpc(1_000_000_001n, true))).toBe(
      "descriptors[0].hits_addend 1000000001 is larger than 1000000000 (Envoy's bound)",
    );
    const json = JSON.stringify({
      domain: "ai",
      descriptors: [{ entries: [{ key: "k", value: "v" }], hitsAddend: "1000000001", isNegativeHits: true }],
    });
    expect(refusal(() => parseJsonQuery(json, DEFAULT_BOUNDS))).toMatch(/hits_addend 1000000001 is larger/);
  });

  it("refuses a non-boolean isNegativeHits on /json", () => {
    const json = JSON.stringify({
      domain: "ai",
      descriptors: [{ entries: [{ key: "k", value: "v" }], isNegativeHits: "yes" }],
    });
    expect(refusal(() => parseJsonQuery(json, DEFAULT_BOUNDS))).toMatch(
      /isNegativeHits|is_negative_hits|bool/,
    );
  });
});
