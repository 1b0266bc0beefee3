import { create, fromBinary, type MessageInitShape, toBinary } from "@bufbuild/protobuf";
import { BinaryWriter, WireType } from "@bufbuild/protobuf/wire";
import { describe, expect, it } from "vitest";
import { RateLimitRequestSchema } from "../../src/gen/envoy/service/ratelimit/v3/rls_pb.js";
import type { RateLimitUnit } from "../../src/gen/envoy/type/v3/ratelimit_unit_pb.js";
import { DEFAULT_BOUNDS, toQuery } from "../../src/protocol/codec.js";
import { GrpcError, Status } from "../../src/protocol/grpc/status.js";
import { readRequest } from "../../src/protocol/request-wire.js";
import { Prng } from "../fuzz/prng.js";

type RequestInit = MessageInitShape<typeof RateLimitRequestSchema>;

/** Small deterministic PRNG (mulberry32, the fuzz suite's) so a failure names a reproducible seed. */
function prng(seed: number): () => number {
  const p = new Prng(seed);
  return () => p.next();
}

const WORDS = [
  "tenant",
  "acme",
  "route_class",
  "read",
  "",
  "10.0.0.1",
  "ключ",
  "🚀",
  "a\uFFFDb",
  "x".repeat(40),
];

function randomInit(rand: () => number): RequestInit {
  const int = (n: number) => Math.floor(rand() * n);
  const word = () => WORDS[int(WORDS.length)] as string;
  return {
    domain: word(),
    hitsAddend: int(3) === 0 ? int(2 ** 32) : int(4),
    descriptors: Array.from({ length: int(4) }, () => ({
      entries: Array.from({ length: int(4) }, () => ({ key: word(), value: word() })),
      ...(int(3) === 0 ? { limit: { requestsPerUnit: int(1000), unit: (int(9) - 1) as RateLimitUnit } } : {}),
      ...(int(3) === 0 ? { hitsAddend: int(2) === 0 ? BigInt(int(10)) : 2n ** 40n + BigInt(int(9)) } : {}),
      ...(int(3) === 0 ? { isNegativeHits: true } : {}),
    })),
  };
}

const encode = (init: RequestInit) => toBinary(RateLimitRequestSchema, create(RateLimitRequestSchema, init));

/** Unknown fields of every wire type, groups nested `depth` deep, valid anywhere in a message. */
function unknownFields(rand: () => number, depth: number): Uint8Array {
  const w = new BinaryWriter();
  const field = 100 + Math.floor(rand() * 1000);
  w.tag(field, WireType.Varint).uint64(BigInt(Math.floor(rand() * 2 ** 40)));
  w.tag(field + 1, WireType.Bit64).fixed64(7n);
  w.tag(field + 2, WireType.Bit32).fixed32(9);
  w.tag(field + 3, WireType.LengthDelimited).bytes(new Uint8Array([1, 2, 3]));
  for (let i = 0; i < depth; i++)
    w.tag(field + 4 + i, WireType.StartGroup)
      .tag(field, WireType.Varint)
      .int32(1);
  for (let i = depth - 1; i >= 0; i--) w.tag(field + 4 + i, WireType.EndGroup);
  return w.finish();
}

/** A request with unknown fields inside every message (top level, descriptor, entry, limit). */
function withUnknowns(init: RequestInit, rand: () => number): Uint8Array {
  const u = () => unknownFields(rand, Math.floor(rand() * 3));
  const w = new BinaryWriter();
  w.raw(u());
  if (init.domain) w.tag(1, WireType.LengthDelimited).string(init.domain);
  for (const d of init.descriptors ?? []) {
    const dw = new BinaryWriter().raw(u());
    for (const e of d.entries ?? []) {
      const ew = new BinaryWriter()
        .raw(u())
        .tag(1, WireType.LengthDelimited)
        .string(e.key ?? "");
      dw.tag(1, WireType.LengthDelimited).bytes(
        ew
          .raw(u())
          .tag(2, WireType.LengthDelimited)
          .string(e.value ?? "")
          .finish(),
      );
    }
    if (d.limit) {
      const lw = new BinaryWriter()
        .raw(u())
        .tag(1, WireType.Varint)
        .uint32(d.limit.requestsPerUnit ?? 0);
      dw.tag(2, WireType.LengthDelimited).bytes(
        lw
          .tag(2, WireType.Varint)
          .int32(d.limit.unit ?? 0)
          .raw(u())
          .finish(),
      );
    }
    if (d.hitsAddend !== undefined) {
      const hw = new BinaryWriter()
        .raw(u())
        .tag(1, WireType.Varint)
        .uint64(d.hitsAddend as bigint);
      dw.tag(3, WireType.LengthDelimited).bytes(hw.finish());
    }
    if (d.isNegativeHits) dw.tag(4, WireType.Varint).bool(true);
    w.tag(2, WireType.LengthDelimited).bytes(dw.raw(u()).finish());
  }
  if (init.hitsAddend) w.tag(3, WireType.Varint).uint32(init.hitsAddend);
  return w.raw(u()).finish();
}

/** The query (or the error message) a decoder gives, for comparing two decoders. */
function outcome(decode: () => Parameters<typeof toQuery>[0]): unknown {
  try {
    return toQuery(decode(), DEFAULT_BOUNDS);
  } catch (err) {
    expect(err).toBeInstanceOf(GrpcError);
    expect((err as GrpcError).code).toBe(Status.INVALID_ARGUMENT);
    return { error: (err as GrpcError).message };
  }
}

const ours = (b: Uint8Array) => outcome(() => readRequest(b));
/** protobuf-es' answer; its own decode errors (RangeError, Error) count as an error too. */
function reference(b: Uint8Array): unknown {
  let req: ReturnType<typeof fromBinary<typeof RateLimitRequestSchema>>;
  try {
    req = fromBinary(RateLimitRequestSchema, b);
  } catch (err) {
    return { error: `fromBinary: ${(err as Error).message}` };
  }
  return outcome(() => req);
}

describe("readRequest agrees with protobuf-es fromBinary", () => {
  it("on 2,000 random requests, alone and concatenated (merge semantics)", () => {
    const rand = prng(20261202);
    for (let i = 0; i < 2000; i++) {
      const a = encode(randomInit(rand));
      const b = encode(randomInit(rand));
      const both = Buffer.concat([a, b]);
      expect(ours(a), `case ${i} (a)`).toEqual(reference(a));
      expect(ours(both), `case ${i} (a+b)`).toEqual(reference(both));
    }
  });

  it("on 500 random requests with unknown fields and groups inside every message", () => {
    const rand = prng(7);
    for (let i = 0; i < 500; i++) {
      const init = randomInit(rand);
      const bytes = withUnknowns(init, rand);
      expect(ours(bytes), `case ${i}`).toEqual(reference(encode(init)));
      expect(ours(bytes), `case ${i}`).toEqual(reference(bytes));
    }
  });

  it("on every truncation of a valid request: the same query or an INVALID_ARGUMENT", () => {
    const bytes = withUnknowns(randomInit(prng(3)), prng(4));
    for (let n = 0; n < bytes.length; n++) {
      const cut = bytes.subarray(0, n);
      const mine = ours(cut);
      const theirs = reference(cut);
      if ((mine as { error?: string }).error === undefined) expect(mine).toEqual(theirs);
      else expect((theirs as { error?: string }).error, `cut at ${n}`).toBeDefined();
    }
  });

  it("never throws anything but INVALID_ARGUMENT on 5,000 random byte strings", () => {
    const rand = prng(99);
    for (let i = 0; i < 5000; i++) {
      const bytes = Buffer.from(
        Array.from({ length: Math.floor(rand() * 64) }, () => Math.floor(rand() * 256)),
      );
      ours(bytes);
    }
  });
});

describe("readRequest", () => {
  const raw = (...b: number[]) => new Uint8Array(b);

  it("accepts a real U+FFFD in a value, which fromBinary cannot tell from invalid bytes", () => {
    const q = toQuery(
      readRequest(encode({ domain: "d", descriptors: [{ entries: [{ key: "k", value: "a\uFFFD" }] }] })),
      DEFAULT_BOUNDS,
    );
    expect(q.descriptors[0]?.entries[0]?.value).toBe("a\uFFFD");
  });

  it.each([
    ["domain", raw(0x0a, 0x01, 0xff)],
    ["descriptors[0].entries[0].key", raw(0x12, 0x05, 0x0a, 0x03, 0x0a, 0x01, 0xc0)],
    ["descriptors[1].entries[0].value", raw(0x12, 0x00, 0x12, 0x05, 0x0a, 0x03, 0x12, 0x01, 0x80)],
  ])("names %s when its bytes are not UTF-8", (where, bytes) => {
    expect(() => readRequest(bytes)).toThrow(`${where} is not valid UTF-8`);
  });

  it("decodes short ASCII strings exactly through its bounded intern table, collisions included", () => {
    // 20,000 distinct values of equal length overflow the 4,096-slot table many times over.
    const values = Array.from({ length: 20_000 }, (_, i) => `v${String(i).padStart(7, "0")}`);
    const decodeAll = () =>
      values.map(
        (value) =>
          readRequest(encode({ domain: "d", descriptors: [{ entries: [{ key: "tenant", value }] }] }))
            .descriptors[0]?.entries[0],
      );
    for (const round of [decodeAll(), decodeAll()]) {
      expect(round.map((e) => e?.value)).toEqual(values);
      expect(round.every((e) => e?.key === "tenant")).toBe(true);
    }
    // Past the interned length and with non-ASCII bytes it decodes as before.
    const long = "x".repeat(200);
    const wide = "caf\u00e9";
    const q = readRequest(encode({ domain: "d", descriptors: [{ entries: [{ key: long, value: wide }] }] }));
    expect(q.descriptors[0]?.entries[0]).toEqual({ key: long, value: wide });
  });

  it("merges a limit or hits_addend sent twice in one descriptor, as protobuf does", () => {
    const entry = new BinaryWriter().tag(1, WireType.LengthDelimited).string("k").finish();
    const d = new BinaryWriter()
      .tag(1, WireType.LengthDelimited)
      .bytes(entry)
      .tag(2, WireType.LengthDelimited)
      .bytes(new BinaryWriter().tag(1, WireType.Varint).uint32(5).finish())
      .tag(2, WireType.LengthDelimited)
      .bytes(new BinaryWriter().tag(2, WireType.Varint).int32(2).finish())
      .tag(3, WireType.LengthDelimited)
      .bytes(new BinaryWriter().tag(1, WireType.Varint).uint64(9n).finish())
      .tag(3, WireType.LengthDelimited)
      .bytes(new Uint8Array(0))
      .finish();
    const bytes = new BinaryWriter()
      .tag(1, WireType.LengthDelimited)
      .string("d")
      .tag(2, WireType.LengthDelimited)
      .bytes(d)
      .finish();
    expect(readRequest(bytes).descriptors[0]).toMatchObject({
      limit: { requestsPerUnit: 5, unit: 2 },
      hitsAddend: 9n,
    });
    expect(ours(bytes)).toEqual(reference(bytes));
  });

  it("reads a 10-byte varint enum as its low 32 bits (negative unit -1)", () => {
    const d = readRequest(
      encode({
        domain: "d",
        descriptors: [
          { entries: [{ key: "k", value: "v" }], limit: { requestsPerUnit: 5, unit: -1 as RateLimitUnit } },
        ],
      }),
    );
    expect(d.descriptors[0]?.limit).toEqual({ requestsPerUnit: 5, unit: -1 });
  });

  it("reads is_negative_hits as protobuf does: any varint not 0 in 64 bits, the last occurrence winning", () => {
    const bytes = (...values: bigint[]) => {
      const dw = new BinaryWriter()
        .tag(1, WireType.LengthDelimited)
        .bytes(new BinaryWriter().tag(1, WireType.LengthDelimited).string("k").finish());
      for (const v of values) dw.tag(4, WireType.Varint).uint64(v);
      return new BinaryWriter()
        .tag(1, WireType.LengthDelimited)
        .string("d")
        .tag(2, WireType.LengthDelimited)
        .bytes(dw.finish())
        .finish();
    };
    for (const values of [[1n], [0n], [2n ** 32n], [1n, 0n], [0n, 5n]]) {
      const b = bytes(...values);
      expect(ours(b)).toEqual(reference(b));
      expect(readRequest(b).descriptors[0]?.isNegativeHits).toBe(values.at(-1) !== 0n);
    }
  });

  it("keeps a per-descriptor hits_addend above 2^53 exact", () => {
    const big = 2n ** 64n - 1n;
    const d = readRequest(
      encode({ domain: "d", descriptors: [{ entries: [{ key: "k", value: "v" }], hitsAddend: big }] }),
    );
    expect(d.descriptors[0]?.hitsAddend).toBe(big);
  });

  it("refuses an unterminated group nested 100,000 deep without recursion", () => {
    const w = new BinaryWriter().tag(1, WireType.LengthDelimited).string("d");
    for (let i = 0; i < 100_000; i++) w.tag(9, WireType.StartGroup);
    expect(() => readRequest(w.finish())).toThrow("cannot decode RateLimitRequest: unterminated group");
  });

  it.each([
    ["a length past the end", raw(0x0a, 0x05, 0x61), "premature end of input"],
    ["field number 0", raw(0x00, 0x01), "invalid field number 0"],
    ["wire type 7", raw(0x0f), "invalid wire type 7"],
    ["a stray end group", raw(0x0c), "unexpected end group tag"],
    ["a mismatched end group", raw(0x0b, 0x14), "invalid end group tag"],
    ["an 11-byte varint", raw(0x18, ...Array(10).fill(0xff), 0x01), "invalid varint"],
  ])("refuses %s", (_, bytes, reason) => {
    expect(() => readRequest(bytes)).toThrow(`cannot decode RateLimitRequest: ${reason}`);
  });
});
