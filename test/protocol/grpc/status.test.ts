import { describe, expect, it } from "vitest";
import { encodeGrpcMessage, GrpcError, Status } from "../../../src/protocol/grpc/status.js";

describe("encodeGrpcMessage", () => {
  it("leaves printable ASCII other than % as is", () => {
    expect(encodeGrpcMessage("domain is empty: descriptors[0] ~")).toBe("domain is empty: descriptors[0] ~");
  });

  it("percent-encodes %, control characters and the UTF-8 bytes of non-ASCII text", () => {
    expect(encodeGrpcMessage("100%")).toBe("100%25");
    expect(encodeGrpcMessage("a\r\nb\tc")).toBe("a%0D%0Ab%09c");
    expect(encodeGrpcMessage("é€")).toBe("%C3%A9%E2%82%AC");
  });

  it("round-trips through decodeURIComponent", () => {
    const text = "règle «x» 100% \n done";
    expect(decodeURIComponent(encodeGrpcMessage(text))).toBe(text);
  });
});

describe("GrpcError", () => {
  it("carries its status code and cause", () => {
    const cause = new Error("inner");
    const err = new GrpcError(Status.UNAVAILABLE, "store down", { cause });
    expect(err.code).toBe(14);
    expect(err.cause).toBe(cause);
    expect(err).toBeInstanceOf(Error);
  });
});
