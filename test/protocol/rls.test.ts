import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { RateLimitAnswer, RateLimitQuery } from "../../src/engine/types.js";
import { DEFAULT_BOUNDS } from "../../src/protocol/codec.js";
import { createGrpcServer, type GrpcServer } from "../../src/protocol/grpc/server.js";
import { GrpcError, Status } from "../../src/protocol/grpc/status.js";
import { RLS_PATH, rlsMethod } from "../../src/protocol/rls.js";
import { StoreError } from "../../src/store/store.js";
import { callError, createRlsClient, type RlsClient } from "../helpers/official-client.js";

/**
 * A tiny fake engine: a descriptor whose first value is "blocked" is over a 10/minute limit named
 * "per_tenant"; "free" matches nothing; anything else is within it with `9 - hits` remaining.
 */
let handler: (q: RateLimitQuery) => Promise<RateLimitAnswer>;
const seen: RateLimitQuery[] = [];

async function fakeEngine(q: RateLimitQuery): Promise<RateLimitAnswer> {
  const statuses = q.descriptors.map((d) => {
    const value = d.entries[0]?.value;
    if (value === "free")
      return {
        code: "OK" as const,
        currentLimit: undefined,
        limitRemaining: 0,
        durationUntilResetSec: undefined,
      };
    const over = value === "blocked";
    return {
      code: over ? ("OVER_LIMIT" as const) : ("OK" as const),
      currentLimit: { requestsPerUnit: 10, unit: "minute" as const, name: "per_tenant" },
      limitRemaining: over ? 0 : 9 - (d.hitsAddend ?? Math.max(q.hitsAddend, 1)),
      durationUntilResetSec: over ? 6 : 1,
    };
  });
  const over = statuses.some((s) => s.code === "OVER_LIMIT");
  return {
    overallCode: over ? "OVER_LIMIT" : "OK",
    statuses,
    responseHeaders: [{ key: "X-RateLimit-Limit", value: "10" }],
  };
}

let server: GrpcServer;
let client: RlsClient;

beforeAll(async () => {
  server = createGrpcServer({
    methods: [
      rlsMethod(async (q) => {
        seen.push(q);
        return handler(q);
      }, DEFAULT_BOUNDS),
    ],
    maxMessageBytes: 64 * 1024,
  });
  const { port } = await server.listen("127.0.0.1", 0);
  client = createRlsClient(`127.0.0.1:${port}`);
});

afterAll(async () => {
  client.close();
  await server.close();
});

beforeEach(() => {
  handler = fakeEngine;
  seen.length = 0;
});

const request = (...values: string[]) => ({
  domain: "edge",
  descriptors: values.map((value) => ({ entries: [{ key: "tenant", value }] })),
});

const failure = (req: object) => callError(client.shouldRateLimit(req));

describe("ShouldRateLimit through the official Envoy protos", () => {
  it("serves the path Envoy calls", () => {
    expect(RLS_PATH).toBe("/envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit");
  });

  it("answers OK with one status per descriptor, the limit, remaining, reset and headers", async () => {
    const res = await client.shouldRateLimit({ ...request("acme", "free"), hits_addend: 2 });
    expect(seen[0]).toMatchObject({ domain: "edge", hitsAddend: 2 });
    expect(res.overall_code).toBe("OK");
    expect(res.statuses).toHaveLength(2);
    expect(res.statuses[0]).toEqual({
      code: "OK",
      current_limit: { requests_per_unit: 10, unit: "MINUTE", name: "per_tenant" },
      limit_remaining: 7,
      duration_until_reset: { seconds: 1, nanos: 0 },
      quota: null,
    });
    expect(res.statuses[1]).toMatchObject({ code: "OK", current_limit: null, duration_until_reset: null });
    expect(res.response_headers_to_add).toEqual([
      { key: "X-RateLimit-Limit", value: "10", raw_value: Buffer.alloc(0) },
    ]);
  });

  it("answers OVER_LIMIT when a descriptor is over", async () => {
    const res = await client.shouldRateLimit(request("acme", "blocked"));
    expect(res.overall_code).toBe("OVER_LIMIT");
    expect(res.statuses.map((s) => s.code)).toEqual(["OK", "OVER_LIMIT"]);
    expect(res.statuses[1]?.limit_remaining).toBe(0);
  });

  it("decodes a descriptor limit override sent by Envoy", async () => {
    await client.shouldRateLimit({
      domain: "edge",
      descriptors: [
        { entries: [{ key: "tenant", value: "acme" }], limit: { requests_per_unit: 3, unit: "DAY" } },
      ],
    });
    expect(seen[0]?.descriptors[0]?.limit).toEqual({ requestsPerUnit: 3, unit: "day" });
  });

  it("answers INVALID_ARGUMENT with the reason for invalid input", async () => {
    const empty = await failure({ domain: "", descriptors: [] });
    expect(empty.code).toBe(Status.INVALID_ARGUMENT);
    expect(empty.details).toBe("domain is empty");
    const key = await failure({ domain: "edge", descriptors: [{ entries: [{ key: "", value: "x" }] }] });
    expect(key.details).toBe("descriptors[0].entries[0].key is empty");
    expect(seen).toHaveLength(0);
  });

  it("answers UNAVAILABLE when the store failed, never UNKNOWN", async () => {
    handler = async () => {
      throw new StoreError("connection refused", { code: "connection", transient: true });
    };
    const err = await failure(request("acme"));
    expect(err.code).toBe(Status.UNAVAILABLE);
    expect(err.details).toContain("connection refused");
  });

  it("answers INTERNAL to an unexpected handler error, never UNKNOWN", async () => {
    handler = async () => {
      throw new TypeError("undefined is not a function");
    };
    expect((await failure(request("acme"))).code).toBe(Status.INTERNAL);
  });

  it("passes a handler's GrpcError through, message intact after percent-encoding", async () => {
    handler = async () => {
      throw new GrpcError(Status.FAILED_PRECONDITION, "règle «x» 100%");
    };
    const err = await failure(request("acme"));
    expect(err.code).toBe(Status.FAILED_PRECONDITION);
    expect(err.details).toBe("règle «x» 100%");
  });

  it("answers DEADLINE_EXCEEDED when the handler outlives the client's deadline", async () => {
    handler = () => new Promise(() => {});
    const err = await callError(client.shouldRateLimit(request("acme"), { deadlineMs: 20 }));
    expect(err.code).toBe(Status.DEADLINE_EXCEEDED);
  });

  it("answers RESOURCE_EXHAUSTED to a 10 MB request and keeps serving", async () => {
    const err = await failure(request("x".repeat(10 * 1024 * 1024)));
    expect(err.code).toBe(Status.RESOURCE_EXHAUSTED);
    expect((await client.shouldRateLimit(request("acme"))).overall_code).toBe("OK");
  });
});
