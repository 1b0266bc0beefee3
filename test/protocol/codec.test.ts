import { create, fromBinary, type MessageInitShape, toBinary } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import type { RateLimitAnswer } from "../../src/engine/types.js";
import {
  RateLimitRequestSchema,
  RateLimitResponse_Code,
  RateLimitResponse_RateLimit_Unit,
  RateLimitResponseSchema,
} from "../../src/gen/envoy/service/ratelimit/v3/rls_pb.js";
import { RateLimitUnit } from "../../src/gen/envoy/type/v3/ratelimit_unit_pb.js";
import {
  answerToJson,
  DEFAULT_BOUNDS,
  decodeQuery,
  encodeAnswer,
  parseJsonQuery,
} from "../../src/protocol/codec.js";
import { GrpcError, Status } from "../../src/protocol/grpc/status.js";

type RequestInit = MessageInitShape<typeof RateLimitRequestSchema>;

const bytes = (init: RequestInit) => toBinary(RateLimitRequestSchema, create(RateLimitRequestSchema, init));
const decode = (init: RequestInit, bounds = DEFAULT_BOUNDS) => decodeQuery(bytes(init), bounds);
const one = (key: string, value: string) => ({ entries: [{ key, value }] });

function invalid(init: RequestInit, bounds = DEFAULT_BOUNDS): string {
  try {
    decode(init, bounds);
  } catch (err) {
    expect(err).toBeInstanceOf(GrpcError);
    expect((err as GrpcError).code).toBe(Status.INVALID_ARGUMENT);
    return (err as GrpcError).message;
  }
  throw new Error("expected INVALID_ARGUMENT");
}

describe("decodeQuery", () => {
  it("turns a request into a domain query with entries in order", () => {
    const q = decode({
      domain: "edge",
      descriptors: [
        {
          entries: [
            { key: "tenant", value: "acme" },
            { key: "route_class", value: "read" },
          ],
        },
      ],
      hitsAddend: 3,
    });
    expect(q).toEqual({
      domain: "edge",
      hitsAddend: 3,
      descriptors: [
        {
          entries: [
            { key: "tenant", value: "acme" },
            { key: "route_class", value: "read" },
          ],
          limit: undefined,
          hitsAddend: undefined,
          negativeHits: false,
        },
      ],
    });
  });

  it("keeps request hits_addend 0 as 0 (the engine reads it as 1)", () => {
    expect(decode({ domain: "d", descriptors: [one("k", "v")] }).hitsAddend).toBe(0);
  });

  it("gives a present per-descriptor hits_addend, even 0, and undefined when absent", () => {
    const q = decode({
      domain: "d",
      descriptors: [
        { ...one("k", "v"), hitsAddend: 0n },
        { ...one("k", "v"), hitsAddend: 7n },
        one("k", "v"),
      ],
    });
    expect(q.descriptors.map((d) => d.hitsAddend)).toEqual([0, 7, undefined]);
  });

  it("accepts hits_addend up to Envoy's bound of 1e9 and refuses more, request-level and per descriptor", () => {
    expect(decode({ domain: "d", descriptors: [one("k", "v")], hitsAddend: 1_000_000_000 }).hitsAddend).toBe(
      1_000_000_000,
    );
    expect(invalid({ domain: "d", descriptors: [one("k", "v")], hitsAddend: 4_294_967_295 })).toBe(
      "hits_addend 4294967295 is larger than 1000000000 (Envoy's bound)",
    );
    expect(
      invalid({
        domain: "d",
        descriptors: [one("a", "b"), { ...one("k", "v"), hitsAddend: 1_000_000_001n }],
      }),
    ).toBe("descriptors[1].hits_addend 1000000001 is larger than 1000000000 (Envoy's bound)");
    expect(() =>
      parseJsonQuery(
        '{"domain":"d","descriptors":[{"entries":[{"key":"k","value":"v"}]}],"hitsAddend":4294967295}',
        DEFAULT_BOUNDS,
      ),
    ).toThrow("hits_addend 4294967295 is larger than 1000000000 (Envoy's bound)");
  });

  it("decodes a limit override with its unit", () => {
    const q = decode({
      domain: "d",
      descriptors: [{ ...one("k", "v"), limit: { requestsPerUnit: 5, unit: RateLimitUnit.HOUR } }],
    });
    expect(q.descriptors[0]?.limit).toEqual({ requestsPerUnit: 5, unit: "hour" });
  });

  it("rejects a limit override with unit UNKNOWN, naming the descriptor", () => {
    const msg = invalid({
      domain: "d",
      descriptors: [
        one("a", "b"),
        { ...one("k", "v"), limit: { requestsPerUnit: 5, unit: RateLimitUnit.UNKNOWN } },
      ],
    });
    expect(msg).toContain("descriptors[1].limit.unit is UNKNOWN");
  });

  it("rejects an empty domain", () => {
    expect(invalid({ domain: "", descriptors: [one("k", "v")] })).toBe("domain is empty");
  });

  it("rejects a request without descriptors", () => {
    expect(invalid({ domain: "d", descriptors: [] })).toBe("no descriptors");
  });

  it("rejects a descriptor without entries", () => {
    expect(invalid({ domain: "d", descriptors: [one("k", "v"), { entries: [] }] })).toBe(
      "descriptors[1] has no entries",
    );
  });

  it("names the descriptor and entry of an empty key", () => {
    const descriptors = [one("a", "1"), one("b", "2"), one("c", "3"), { entries: [{ key: "", value: "x" }] }];
    expect(invalid({ domain: "d", descriptors })).toBe("descriptors[3].entries[0].key is empty");
  });

  it("rejects more descriptors than maxDescriptors, naming the limit", () => {
    const descriptors = Array.from({ length: 3 }, () => one("k", "v"));
    expect(invalid({ domain: "d", descriptors }, { ...DEFAULT_BOUNDS, maxDescriptors: 2 })).toBe(
      "3 descriptors, more than the limit of 2",
    );
  });

  it("rejects more entries than maxEntries, naming the limit", () => {
    const entries = Array.from({ length: 17 }, (_, i) => ({ key: `k${i}`, value: "v" }));
    expect(invalid({ domain: "d", descriptors: [{ entries }] })).toBe(
      "descriptors[0] has 17 entries, more than the limit of 16",
    );
  });

  it("rejects a key or value longer than maxKeyValueBytes in UTF-8 bytes, naming the limit", () => {
    expect(invalid({ domain: "d", descriptors: [one("k", "v".repeat(257))] })).toBe(
      "descriptors[0].entries[0].value is 257 bytes, more than the limit of 256",
    );
    // 86 three-byte characters: 86 UTF-16 units but 258 bytes.
    expect(invalid({ domain: "d", descriptors: [one("€".repeat(86), "v")] })).toBe(
      "descriptors[0].entries[0].key is 258 bytes, more than the limit of 256",
    );
    expect(decode({ domain: "d", descriptors: [one("k", "v".repeat(256))] }).descriptors).toHaveLength(1);
  });

  it("rejects a key that is not valid UTF-8", () => {
    // RateLimitRequest{domain: "d", descriptors: [{entries: [{key: 0xff}]}]}, written by hand.
    const raw = new Uint8Array([0x0a, 0x01, 0x64, 0x12, 0x05, 0x0a, 0x03, 0x0a, 0x01, 0xff]);
    expect(() => decodeQuery(raw, DEFAULT_BOUNDS)).toThrow(
      "descriptors[0].entries[0].key is not valid UTF-8",
    );
  });

  it("rejects bytes that are not a RateLimitRequest", () => {
    expect(() => decodeQuery(new Uint8Array([0x0a, 0xff, 0xff]), DEFAULT_BOUNDS)).toThrow(
      /cannot decode RateLimitRequest/,
    );
  });
});

const answer: RateLimitAnswer = {
  overallCode: "OVER_LIMIT",
  statuses: [
    {
      code: "OVER_LIMIT",
      currentLimit: { requestsPerUnit: 10, unit: "week", name: "tenant_weekly" },
      limitRemaining: 0,
      durationUntilResetSec: 42,
    },
    { code: "OK", currentLimit: undefined, limitRemaining: 0, durationUntilResetSec: undefined },
  ],
  responseHeaders: [{ key: "X-RateLimit-Limit", value: "10" }],
};

describe("encodeAnswer", () => {
  it("encodes statuses 1:1 with limit, remaining, reset seconds and headers", () => {
    const res = fromBinary(RateLimitResponseSchema, encodeAnswer(answer));
    expect(res.overallCode).toBe(RateLimitResponse_Code.OVER_LIMIT);
    expect(res.statuses).toHaveLength(2);
    const [over, ok] = res.statuses;
    expect(over?.code).toBe(RateLimitResponse_Code.OVER_LIMIT);
    expect(over?.currentLimit?.name).toBe("tenant_weekly");
    expect(over?.currentLimit?.requestsPerUnit).toBe(10);
    expect(over?.currentLimit?.unit).toBe(RateLimitResponse_RateLimit_Unit.WEEK);
    expect(over?.durationUntilReset?.seconds).toBe(42n);
    expect(over?.durationUntilReset?.nanos).toBe(0);
    expect(ok?.code).toBe(RateLimitResponse_Code.OK);
    expect(ok?.currentLimit).toBeUndefined();
    expect(ok?.durationUntilReset).toBeUndefined();
    expect(res.responseHeadersToAdd.map((h) => [h.key, h.value])).toEqual([["X-RateLimit-Limit", "10"]]);
  });

  it("never encodes overall_code UNKNOWN", () => {
    const res = fromBinary(RateLimitResponseSchema, encodeAnswer({ ...answer, overallCode: "OK" }));
    expect(res.overallCode).toBe(RateLimitResponse_Code.OK);
  });
});

describe("JSON twin", () => {
  it("parses proto3 JSON in camelCase or the original field names", () => {
    const camel = parseJsonQuery(
      '{"domain":"edge","descriptors":[{"entries":[{"key":"tenant","value":"acme"}],"hitsAddend":"0"}],"hitsAddend":2}',
      DEFAULT_BOUNDS,
    );
    expect(camel.hitsAddend).toBe(2);
    expect(camel.descriptors[0]?.hitsAddend).toBe(0);
    const snake = parseJsonQuery(
      '{"domain":"edge","descriptors":[{"entries":[{"key":"tenant","value":"acme"}]}],"hits_addend":2}',
      DEFAULT_BOUNDS,
    );
    expect(snake.hitsAddend).toBe(2);
  });

  it("gives a one-line reason for malformed JSON or an unknown field", () => {
    for (const text of ["{", '{"domain":"d","nope":1}']) {
      let message = "";
      try {
        parseJsonQuery(text, DEFAULT_BOUNDS);
      } catch (err) {
        expect((err as GrpcError).code).toBe(Status.INVALID_ARGUMENT);
        message = (err as GrpcError).message;
      }
      expect(message).toMatch(/^invalid RateLimitRequest JSON: /);
      expect(message).not.toContain("\n");
    }
  });

  it("applies the same bounds as the binary codec", () => {
    expect(() => parseJsonQuery('{"domain":"edge","descriptors":[]}', DEFAULT_BOUNDS)).toThrow(
      "no descriptors",
    );
  });

  it("accepts U+FFFD but refuses a lone surrogate, which has no UTF-8 form", () => {
    const json = (value: string) =>
      `{"domain":"edge","descriptors":[{"entries":[{"key":"k","value":"${value}"}]}]}`;
    expect(parseJsonQuery(json("a\\ufffd"), DEFAULT_BOUNDS).descriptors[0]?.entries[0]?.value).toBe(
      "a\uFFFD",
    );
    expect(() => parseJsonQuery(json("a\\ud800"), DEFAULT_BOUNDS)).toThrow(
      /^invalid RateLimitRequest JSON: .*Entry.value from JSON: .*invalid UTF8$/,
    );
    expect(parseJsonQuery(json("\\ud83d\\ude80"), DEFAULT_BOUNDS).descriptors[0]?.entries[0]?.value).toBe(
      "🚀",
    );
  });

  it("prints the answer with camelCase names and enums as names", () => {
    expect(JSON.parse(answerToJson(answer))).toEqual({
      overallCode: "OVER_LIMIT",
      statuses: [
        {
          code: "OVER_LIMIT",
          currentLimit: { name: "tenant_weekly", requestsPerUnit: 10, unit: "WEEK" },
          durationUntilReset: "42s",
        },
        { code: "OK" },
      ],
      responseHeadersToAdd: [{ key: "X-RateLimit-Limit", value: "10" }],
    });
  });
});
