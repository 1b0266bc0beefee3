import { toBinary } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { compiledLimit } from "../../src/config/hot-path.js";
import type { DescriptorStatus, Header, RateLimitAnswer, Unit } from "../../src/engine/types.js";
import { RateLimitResponseSchema } from "../../src/gen/envoy/service/ratelimit/v3/rls_pb.js";
import { encodeAnswerFramed, toResponse } from "../../src/protocol/codec.js";
import { frame } from "../../src/protocol/grpc/framing.js";
import { writeResponse } from "../../src/protocol/response-wire.js";

const reference = (a: RateLimitAnswer) => Buffer.from(toBinary(RateLimitResponseSchema, toResponse(a)));
const ours = (a: RateLimitAnswer) => Buffer.from(writeResponse(a));

const status = (over: Partial<DescriptorStatus> = {}): DescriptorStatus => ({
  code: "OK",
  currentLimit: { requestsPerUnit: 10, unit: "second", name: "per_tenant" },
  limitRemaining: 9,
  durationUntilResetSec: 1,
  ...over,
});
const answer = (statuses: DescriptorStatus[], responseHeaders: Header[] = []): RateLimitAnswer => ({
  overallCode: statuses.some((s) => s.code === "OVER_LIMIT") ? "OVER_LIMIT" : "OK",
  statuses,
  responseHeaders,
});

describe("writeResponse", () => {
  const FROZEN_LIMIT = Object.freeze({ requestsPerUnit: 7, unit: "minute" as const, name: "plätt 😀" });
  // A configured limit as compiled: it carries its body bytes (config/hot-path.ts).
  const COMPILED_LIMIT = compiledLimit({ requestsPerUnit: 300, unit: "hour", name: "plätt 😀" });

  it("writes the same bytes as protobuf-es for edge values", () => {
    const cases: RateLimitAnswer[] = [
      answer([]),
      answer([status()]),
      answer([status({ code: "OVER_LIMIT", limitRemaining: 0, durationUntilResetSec: 0 })]),
      answer([status({ currentLimit: undefined, durationUntilResetSec: undefined, limitRemaining: 0 })]),
      answer([status({ limitRemaining: 4_294_967_295, currentLimit: undefined })]),
      answer([status({ currentLimit: { requestsPerUnit: 0, unit: "week", name: undefined } })]),
      answer([status({ currentLimit: { requestsPerUnit: 4_294_967_295, unit: "year", name: "" } })]),
      answer([status({ durationUntilResetSec: 31_536_000 })]),
      // A frozen (configured) limit is encoded once and cached: twice in one answer, non-ASCII name.
      answer([
        status({ currentLimit: FROZEN_LIMIT }),
        status({ currentLimit: FROZEN_LIMIT, limitRemaining: 3 }),
      ]),
      answer([status({ currentLimit: FROZEN_LIMIT })]),
      answer([
        status({ currentLimit: COMPILED_LIMIT }),
        status({ currentLimit: COMPILED_LIMIT, limitRemaining: 0, code: "OVER_LIMIT" }),
      ]),
      answer([status({ currentLimit: { requestsPerUnit: 5, unit: "day", name: "n".repeat(300) } })]),
      answer(
        [status()],
        [
          { key: "X-RateLimit-Limit", value: "10" },
          { key: "X-Empty", value: "" },
          { key: "X-Ünïcode", value: "ça va € 😀" },
          { key: "X-Long", value: "v".repeat(20_000) },
        ],
      ),
      answer(
        Array.from({ length: 64 }, (_, i) =>
          status({ limitRemaining: i * 1000, code: i % 2 ? "OK" : "OVER_LIMIT" }),
        ),
      ),
    ];
    for (const a of cases) expect(ours(a).toString("hex")).toBe(reference(a).toString("hex"));
  });

  it("rounds a fractional reset up to whole seconds like the message path", () => {
    const a = answer([status({ durationUntilResetSec: 1.2 })]);
    expect(ours(a).equals(reference(a))).toBe(true);
    expect(toResponse(a).statuses[0]?.durationUntilReset?.seconds).toBe(2n);
  });

  it("agrees with protobuf-es on generated answers", () => {
    let seed = 42;
    const rand = (n: number) => {
      seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
      return seed % n;
    };
    const units: Unit[] = ["second", "minute", "hour", "day", "week", "month", "year"];
    for (let c = 0; c < 200; c++) {
      const statuses = Array.from({ length: rand(5) }, () =>
        status({
          code: rand(2) ? "OK" : "OVER_LIMIT",
          currentLimit: rand(4)
            ? {
                requestsPerUnit: rand(1 << 20),
                unit: units[rand(7)] ?? "second",
                name: rand(2) ? `l${rand(1000)}` : undefined,
              }
            : undefined,
          limitRemaining: rand(3) ? rand(1 << 30) : 0,
          durationUntilResetSec: rand(3) ? rand(100_000) : undefined,
        }),
      );
      const headers = Array.from({ length: rand(4) }, () => ({
        key: `h${rand(50)}`,
        value: "x".repeat(rand(200)),
      }));
      const a = answer(statuses, headers);
      expect(ours(a).equals(reference(a))).toBe(true);
      // The framed form is the gRPC frame of the same bytes, written in one buffer.
      expect(encodeAnswerFramed(a).equals(frame(reference(a)))).toBe(true);
    }
  });
});
