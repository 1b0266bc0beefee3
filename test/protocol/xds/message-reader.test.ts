import { describe, expect, it } from "vitest";
import { frame } from "../../../src/protocol/grpc/framing.js";
import { MessageReader } from "../../../src/protocol/xds/message-reader.js";

describe("MessageReader", () => {
  it("hands out each message once complete, however the bytes are split", () => {
    const a = frame(Buffer.from("first message"));
    const b = frame(Buffer.from(""));
    const c = frame(Buffer.alloc(300, 7));
    const all = Buffer.concat([a, b, c]);
    for (const size of [1, 2, 5, 7, 64, all.length]) {
      const reader = new MessageReader(1024);
      const got: Buffer[] = [];
      for (let i = 0; i < all.length; i += size)
        for (const m of reader.push(all.subarray(i, i + size))) got.push(Buffer.from(m));
      expect(got.map((m) => m.toString("hex"))).toEqual(
        [Buffer.from("first message"), Buffer.alloc(0), Buffer.alloc(300, 7)].map((m) => m.toString("hex")),
      );
      expect(reader.buffered).toBe(0);
    }
  });

  it("refuses a compressed or oversized message as soon as its prefix arrives", () => {
    expect(() => new MessageReader(10).push(Buffer.from([1, 0, 0, 0, 1, 0]))).toThrow("compressed");
    expect(() => new MessageReader(10).push(Buffer.from([0, 0, 0, 0, 11]))).toThrow(
      "message of 11 bytes, more than 10",
    );
  });
});
