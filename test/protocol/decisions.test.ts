/**
 * Conformance of the whole decision path as Envoy sees it: the gRPC transport serving `rlsMethod` over
 * a real Engine, MemoryStore and config, called with the grpc-js client built from the official Envoy
 * protos (and raw HTTP/2 where that copy lacks a field). Time moves only with the fake clock.
 */
import type { ClientHttp2Session } from "node:http2";
import { create, toBinary } from "@bufbuild/protobuf";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { parseConfigText } from "../../src/config/load.js";
import { Engine } from "../../src/engine/decide.js";
import { noopMetrics } from "../../src/engine/metrics-port.js";
import { RateLimitRequestSchema } from "../../src/gen/envoy/service/ratelimit/v3/rls_pb.js";
import { DEFAULT_BOUNDS } from "../../src/protocol/codec.js";
import { createGrpcServer, type GrpcServer } from "../../src/protocol/grpc/server.js";
import { Status } from "../../src/protocol/grpc/status.js";
import { RLS_PATH, rlsMethod } from "../../src/protocol/rls.js";
import { MemoryStore } from "../../src/store/memory/memory-store.js";
import { type Store, StoreError } from "../../src/store/store.js";
import { FakeClock } from "../helpers/fake-clock.js";
import { callError, createRlsClient, type RlsClient } from "../helpers/official-client.js";
import { grpcFrame, rawCall, rawSession } from "./grpc/raw-client.js";

const CONFIG = `
domain: edge
descriptors:
  - key: tenant
    rate_limit: { name: per_tenant, unit: minute, requests_per_unit: 2 }
`;

const clock = new FakeClock();
let store: MemoryStore;
/** When set, every take fails with this error (a store outage behind the real engine). */
let storeFailure: StoreError | undefined;
let server: GrpcServer;
let port: number;
let client: RlsClient;
let session: ClientHttp2Session;

beforeAll(async () => {
  const { ruleSet } = parseConfigText("edge.yaml", CONFIG);
  const failing: Store = {
    kind: "memory",
    take: (takes) => (storeFailure ? Promise.reject(storeFailure) : store.take(takes)),
    reset: (keys) => store.reset(keys),
    ready: () => store.ready(),
    close: () => store.close(),
  };
  const engine = new Engine({ rules: () => ruleSet, store: failing, clock, metrics: noopMetrics });
  server = createGrpcServer({
    methods: [rlsMethod((q) => engine.shouldRateLimit(q), DEFAULT_BOUNDS)],
    maxMessageBytes: 64 * 1024,
  });
  port = (await server.listen("127.0.0.1", 0)).port;
  client = createRlsClient(`127.0.0.1:${port}`);
  session = await rawSession(port);
});

afterAll(async () => {
  session.destroy();
  client.close();
  await server.close();
});

beforeEach(() => {
  store = new MemoryStore({ clock });
  storeFailure = undefined;
});

const tenant = (value: string, extra: object = {}) => ({
  domain: "edge",
  descriptors: [{ entries: [{ key: "tenant", value }], ...extra }],
});
const header = (res: { response_headers_to_add: { key: string; value: string }[] }, key: string) =>
  res.response_headers_to_add.find((h) => h.key === key)?.value;
const nowSec = () => Math.ceil(clock.now() / 1000);

describe("decisions through the official Envoy protos", () => {
  it("admits within the limit with the limit, whole tokens left, reset and X-RateLimit headers", async () => {
    const res = await client.shouldRateLimit(tenant("acme"));
    expect(res.overall_code).toBe("OK");
    expect(res.statuses).toEqual([
      {
        code: "OK",
        current_limit: { requests_per_unit: 2, unit: "MINUTE", name: "per_tenant" },
        limit_remaining: 1,
        duration_until_reset: { seconds: 30, nanos: 0 },
        quota: null,
      },
    ]);
    expect(header(res, "X-RateLimit-Limit")).toBe("2");
    expect(header(res, "X-RateLimit-Remaining")).toBe("1");
    expect(Number(header(res, "X-RateLimit-Reset"))).toBe(nowSec() + 30);
    expect(header(res, "Retry-After")).toBeUndefined();
  });

  it("denies past the limit with 0 left and Retry-After, and the denial consumes nothing", async () => {
    await client.shouldRateLimit(tenant("acme"));
    await client.shouldRateLimit(tenant("acme"));
    const over = await client.shouldRateLimit(tenant("acme"));
    expect(over.overall_code).toBe("OVER_LIMIT");
    expect(over.statuses[0]).toMatchObject({ code: "OVER_LIMIT", limit_remaining: 0 });
    expect(over.statuses[0]?.duration_until_reset).toEqual({ seconds: 30, nanos: 0 });
    expect(header(over, "Retry-After")).toBe("30");
    clock.advance(30_000);
    // One emission interval later exactly one token is back: the denied call took none.
    const again = await client.shouldRateLimit(tenant("acme"));
    expect(again.statuses[0]).toMatchObject({ code: "OK", limit_remaining: 0 });
  });

  it("gives each tenant value its own bucket", async () => {
    await client.shouldRateLimit(tenant("acme"));
    await client.shouldRateLimit(tenant("acme"));
    expect((await client.shouldRateLimit(tenant("globex"))).statuses[0]?.limit_remaining).toBe(1);
  });

  it("answers OK without a limit for an unknown domain or an unmatched descriptor", async () => {
    for (const req of [
      { ...tenant("acme"), domain: "other" },
      { domain: "edge", descriptors: [{ entries: [{ key: "route", value: "x" }] }] },
    ]) {
      const res = await client.shouldRateLimit(req);
      expect(res.overall_code).toBe("OK");
      expect(res.statuses).toMatchObject([{ code: "OK", current_limit: null, duration_until_reset: null }]);
      expect(res.response_headers_to_add).toEqual([]);
    }
  });

  it("applies a descriptor limit override sent by Envoy", async () => {
    const override = { limit: { requests_per_unit: 1, unit: "HOUR" } };
    const first = await client.shouldRateLimit(tenant("acme", override));
    expect(first.statuses[0]?.current_limit).toMatchObject({ requests_per_unit: 1, unit: "HOUR" });
    expect((await client.shouldRateLimit(tenant("acme", override))).overall_code).toBe("OVER_LIMIT");
  });

  it("charges the request hits_addend", async () => {
    const res = await client.shouldRateLimit({ ...tenant("acme"), hits_addend: 2 });
    expect(res.statuses[0]?.limit_remaining).toBe(0);
    expect((await client.shouldRateLimit(tenant("acme"))).overall_code).toBe("OVER_LIMIT");
  });

  it("checks without consuming for a present per-descriptor hits_addend of 0 (raw HTTP/2, newer field)", async () => {
    const bytes = toBinary(
      RateLimitRequestSchema,
      create(RateLimitRequestSchema, {
        domain: "edge",
        descriptors: [{ entries: [{ key: "tenant", value: "acme" }], hitsAddend: 0n }],
      }),
    );
    for (let i = 0; i < 3; i++) {
      const reply = await rawCall(session, { path: RLS_PATH, chunks: [grpcFrame(bytes)] });
      expect(reply.grpcStatus).toBe(Status.OK);
    }
    expect((await client.shouldRateLimit(tenant("acme"))).statuses[0]?.limit_remaining).toBe(1);
  });

  it("answers UNAVAILABLE, never UNKNOWN, when the store behind the engine fails", async () => {
    storeFailure = new StoreError("connect ECONNREFUSED", { code: "connection", transient: true });
    const err = await callError(client.shouldRateLimit(tenant("acme")));
    expect(err.code).toBe(Status.UNAVAILABLE);
    expect(err.details).toBe("rate limit store unavailable (connection): connect ECONNREFUSED");
  });
});

const entries = (n: number) => Array.from({ length: n }, (_, i) => ({ key: `k${i}`, value: "v" }));
const INVALID: readonly [string, object, string][] = [
  ["an empty domain", { ...tenant("acme"), domain: "" }, "domain is empty"],
  ["no descriptors", { domain: "edge", descriptors: [] }, "no descriptors"],
  [
    "a descriptor without entries",
    { domain: "edge", descriptors: [{ entries: [] }] },
    "descriptors[0] has no entries",
  ],
  [
    "too many descriptors",
    { domain: "edge", descriptors: Array.from({ length: 65 }, () => tenant("acme").descriptors[0]) },
    "65 descriptors, more than the limit of 64",
  ],
  [
    "too many entries",
    { domain: "edge", descriptors: [{ entries: entries(17) }] },
    "descriptors[0] has 17 entries, more than the limit of 16",
  ],
  [
    "a long key",
    { domain: "edge", descriptors: [{ entries: [{ key: "k".repeat(257), value: "v" }] }] },
    "descriptors[0].entries[0].key is 257 bytes, more than the limit of 256",
  ],
  [
    "a long value in UTF-8 bytes",
    { domain: "edge", descriptors: [{ entries: [{ key: "tenant", value: "é".repeat(129) }] }] },
    "descriptors[0].entries[0].value is 258 bytes, more than the limit of 256",
  ],
  [
    "an override with unit UNKNOWN",
    tenant("acme", { limit: { requests_per_unit: 5, unit: "UNKNOWN" } }),
    "descriptors[0].limit.unit is UNKNOWN: name a unit",
  ],
];

describe("invalid input through the official Envoy protos", () => {
  it.each(INVALID)("answers INVALID_ARGUMENT naming the problem for %s", async (_name, req, reason) => {
    const err = await callError(client.shouldRateLimit(req));
    expect(err.code).toBe(Status.INVALID_ARGUMENT);
    expect(err.details).toBe(reason);
    // Rejected before the engine: no bucket was charged.
    expect((await client.shouldRateLimit(tenant("acme"))).statuses[0]?.limit_remaining).toBe(1);
  });

  it("sends INVALID_ARGUMENT trailers-only, without a message body", async () => {
    const bytes = toBinary(RateLimitRequestSchema, create(RateLimitRequestSchema, { domain: "edge" }));
    const reply = await rawCall(session, { path: RLS_PATH, chunks: [grpcFrame(bytes)] });
    expect(reply.trailers).toBeUndefined();
    expect(reply.body.length).toBe(0);
    expect(reply.headers["grpc-status"]).toBe(String(Status.INVALID_ARGUMENT));
    expect(reply.grpcMessage).toBe("no descriptors");
  });
});
