import { describe, expect, it } from "vitest";
import { parseGrpcTimeout } from "../../../src/protocol/grpc/timeout.js";

describe("parseGrpcTimeout", () => {
  it("reads every unit of the gRPC spec as milliseconds", () => {
    expect(parseGrpcTimeout("2H")).toBe(7_200_000);
    expect(parseGrpcTimeout("3M")).toBe(180_000);
    expect(parseGrpcTimeout("20S")).toBe(20_000);
    expect(parseGrpcTimeout("20m")).toBe(20);
    expect(parseGrpcTimeout("1500u")).toBe(1.5);
    expect(parseGrpcTimeout("2000000n")).toBe(2);
  });

  it("accepts at most 8 digits", () => {
    expect(parseGrpcTimeout("99999999m")).toBe(99_999_999);
    expect(parseGrpcTimeout("100000000m")).toBeUndefined();
  });

  it("rejects a missing or unknown unit, a missing number and signs", () => {
    for (const bad of ["20", "m", "", "20s", "20x", "-1S", "+1S", "1.5S", " 1S"]) {
      expect(parseGrpcTimeout(bad)).toBeUndefined();
    }
  });
});
