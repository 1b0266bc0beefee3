import type { ServiceError } from "@grpc/grpc-js";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { parseExtAuthzConfigTexts } from "../../src/config/sections/ext-authz-parse.js";
import { Engine } from "../../src/engine/decide.js";
import { noopMetrics } from "../../src/engine/metrics-port.js";
import type { RateLimitQuery } from "../../src/engine/types.js";
import { MemoryStore } from "../../src/store/memory/memory-store.js";
import { type Store, StoreError } from "../../src/store/store.js";
import { fakeJwt } from "../helpers/ext-authz-attrs.js";
import {
  type CheckHarness,
  type OfficialCheckResponse,
  pbStruct,
  startCheckHarness,
} from "../helpers/ext-authz-check-client.js";
import { FakeClock } from "../helpers/fake-clock.js";

const CONFIG = `domain: edge
descriptors:
  - key: tenant
    descriptors:
      - key: route_class
        rate_limits:
          - { name: tenant_per_minute, unit: minute, requests_per_unit: 2 }
          - { name: tenant_per_day, unit: day, requests_per_unit: 1000 }
  - key: subnet
    rate_limit: { name: subnet_per_minute, unit: minute, requests_per_unit: 100 }
  - key: client
    descriptors:
      - key: route
        rate_limit: { unit: minute, requests_per_unit: 100 }
ext_authz:
  default: true
  descriptors:
    - required: true
      entries:
        - key: tenant
          jwt_claim: { claim: tenant, payload_metadata: jwt_payload }
        - key: route_class
          route_class:
            default: other
            routes:
              - { methods: "GET, HEAD", prefix: /v1/, class: read }
              - { methods: POST, path: "/v1/*/export", class: export }
    - entries:
        - { key: subnet, source_subnet: {} }
    - entries:
        - { key: client, header: x-client-id }
        - { key: route, context_extension: route_name }
`;
const OTHER = `domain: partner
descriptors:
  - key: api_key
    descriptors:
      - { key: plan, value: basic, rate_limit: { unit: second, requests_per_unit: 5 } }
ext_authz:
  descriptors:
    - required: true
      entries: [{ key: api_key, header: x-api-key }, { key: plan, literal: basic }]
`;

const loaded = parseExtAuthzConfigTexts([
  { file: "edge.yaml", text: CONFIG },
  { file: "partner.yaml", text: OTHER },
]);

/** A store that fails like Redis going away, for a domain with no guard (policy `error`). */
const failingStore: Store = {
  kind: "failing",
  take: () => Promise.reject(new StoreError("connection refused", { code: "connection", transient: true })),
  reset: async () => {},
  ready: async () => {},
  close: async () => {},
};

/** An official-proto CheckRequest (snake_case plain object) for one HTTP request. */
function request(opts: {
  method?: string;
  path?: string;
  headers?: Record<string, string>;
  ip?: string;
  ext?: Record<string, string>;
  metadata?: Record<string, unknown>;
}): object {
  return {
    attributes: {
      source: { address: { socket_address: { address: opts.ip ?? "203.0.113.7", port_value: 50000 } } },
      request: {
        http: {
          method: opts.method ?? "GET",
          path: opts.path ?? "/v1/orders?page=2",
          host: "api.example.com",
          headers: { ":method": opts.method ?? "GET", ...opts.headers },
        },
      },
      context_extensions: opts.ext ?? {},
      metadata_context: {
        filter_metadata: Object.fromEntries(
          Object.entries(opts.metadata ?? {}).map(([ns, v]) => [ns, pbStruct(v as Record<string, unknown>)]),
        ),
      },
    },
  };
}

const bearer = (tenant: string) => ({ authorization: `Bearer ${fakeJwt({ tenant })}` });
const headerMap = (hs: { header?: { key: string; value: string } }[] | undefined) =>
  Object.fromEntries((hs ?? []).map((h) => [h.header?.key.toLowerCase(), h.header?.value]));

describe("ext_authz Check over the gRPC transport, engine and memory store, with the official Envoy protos", () => {
  const clock = new FakeClock(1_767_225_600_000);
  let store: Store;
  let queries: RateLimitQuery[];
  let harness: CheckHarness;
  const engine = new Engine({
    rules: () => loaded.ruleSet,
    store: {
      kind: "test",
      take: (t) => store.take(t),
      reset: async () => {},
      ready: async () => {},
      close: async () => {},
    },
    clock,
    metrics: noopMetrics,
  });

  beforeAll(async () => {
    harness = await startCheckHarness({
      engine: {
        shouldRateLimit: (q) => {
          queries.push(q);
          return engine.shouldRateLimit(q);
        },
      },
      rules: () => loaded.extAuthz,
    });
  });
  afterAll(async () => harness.close());
  beforeEach(() => {
    store = new MemoryStore({ clock });
    queries = [];
  });

  it("builds descriptors from a JWT claim, the route class and the source subnet, never from the raw path", async () => {
    await harness.check(request({ headers: bearer("acme") }));
    expect(queries).toEqual([
      {
        domain: "edge",
        hitsAddend: 1,
        descriptors: [
          {
            entries: [
              { key: "tenant", value: "acme" },
              { key: "route_class", value: "read" },
            ],
            limit: undefined,
            hitsAddend: undefined,
          },
          { entries: [{ key: "subnet", value: "203.0.113.0/24" }], limit: undefined, hitsAddend: undefined },
        ],
      },
    ]);
  });

  it("answers OK with the X-RateLimit-* headers in response_headers_to_add, overwriting client values", async () => {
    const res = await harness.check(request({ headers: bearer("acme") }));
    expect(res.status?.code ?? 0).toBe(0);
    expect(res.http_response).toBe("ok_response");
    const added = res.ok_response?.response_headers_to_add ?? [];
    expect(headerMap(added)).toEqual({
      "x-ratelimit-limit": "2",
      "x-ratelimit-remaining": "1",
      "x-ratelimit-reset": "1767225630",
    });
    expect(added.every((h) => h.append_action === "OVERWRITE_IF_EXISTS_OR_ADD")).toBe(true);
  });

  it("classifies by the first matching route row, with methods and globs, else the default", async () => {
    await harness.check(request({ method: "POST", path: "/v1/acme/export", headers: bearer("a") }));
    await harness.check(request({ method: "POST", path: "/v1/orders", headers: bearer("a") }));
    await harness.check(request({ method: "HEAD", path: "/v1/orders", headers: bearer("a") }));
    expect(queries.map((q) => q.descriptors[0]?.entries[1]?.value)).toEqual(["export", "other", "read"]);
  });

  it("prefers the claim jwt_authn put in metadata_context over decoding the token", async () => {
    const metadata = { "envoy.filters.http.jwt_authn": { jwt_payload: { tenant: "verified" } } };
    await harness.check(request({ headers: bearer("unverified"), metadata }));
    expect(queries[0]?.descriptors[0]?.entries[0]).toEqual({ key: "tenant", value: "verified" });
  });

  it("masks an IPv6 source to /56", async () => {
    await harness.check(request({ headers: bearer("a"), ip: "2001:db8:aa:bbcc:1::9" }));
    expect(queries[0]?.descriptors[1]?.entries).toEqual([{ key: "subnet", value: "2001:db8:aa:bb00::/56" }]);
  });

  it("reads headers and context extensions, and skips a descriptor whose value is missing", async () => {
    await harness.check(
      request({ headers: { ...bearer("a"), "x-client-id": "c1" }, ext: { route_name: "orders" } }),
    );
    await harness.check(request({ headers: { ...bearer("a"), "x-client-id": "c1" } }));
    expect(queries.map((q) => q.descriptors.length)).toEqual([3, 2]);
    expect(queries[0]?.descriptors[2]?.entries).toEqual([
      { key: "client", value: "c1" },
      { key: "route", value: "orders" },
    ]);
  });

  it("selects the domain from the domain context extension", async () => {
    await harness.check(request({ headers: { "x-api-key": "k1" }, ext: { domain: "partner" } }));
    expect(queries[0]).toMatchObject({
      domain: "partner",
      descriptors: [
        {
          entries: [
            { key: "api_key", value: "k1" },
            { key: "plan", value: "basic" },
          ],
        },
      ],
    });
  });

  it("denies with 400 and a reason body when a required value is missing, without calling the engine", async () => {
    const res = await harness.check(request({}));
    expect(res.status?.code).toBe(3);
    expect(res.http_response).toBe("denied_response");
    expect(res.denied_response?.status?.code).toBe("BadRequest");
    expect(JSON.parse(res.denied_response?.body ?? "")).toEqual({
      error: "bad_request",
      reason: 'no value for "tenant" from JWT claim "tenant"',
      descriptor: 0,
      key: "tenant",
    });
    expect(headerMap(res.denied_response?.headers)["content-type"]).toBe("application/json");
    expect(queries).toEqual([]);
  });

  it("denies with 400 when the domain has no ext_authz rules", async () => {
    const res = await harness.check(request({ ext: { domain: "nope" } }));
    expect(res.denied_response?.status?.code).toBe("BadRequest");
    expect(JSON.parse(res.denied_response?.body ?? "").reason).toBe('domain "nope" has no ext_authz section');
  });

  it("answers RESOURCE_EXHAUSTED with a 429, Retry-After, X-RateLimit-* and only the binding limit", async () => {
    const req = request({ headers: bearer("acme") });
    await harness.check(req);
    await harness.check(req);
    const res: OfficialCheckResponse = await harness.check(req);
    expect(res.status?.code).toBe(8);
    expect(res.denied_response?.status?.code).toBe("TooManyRequests");
    expect(headerMap(res.denied_response?.headers)).toEqual({
      "x-ratelimit-limit": "2",
      "x-ratelimit-remaining": "0",
      "x-ratelimit-reset": "1767225630",
      "retry-after": "30",
      "content-type": "application/json",
    });
    // The day limit of the same tenant and the subnet limit are not named.
    expect(JSON.parse(res.denied_response?.body ?? "")).toEqual({
      error: "too_many_requests",
      limit: { name: "tenant_per_minute", requestsPerUnit: 2, unit: "MINUTE" },
      retryAfterSeconds: 30,
    });
  });

  it("fails with gRPC UNAVAILABLE when the store fails under policy error", async () => {
    store = failingStore;
    const err = (await harness
      .check(request({ headers: bearer("acme") }))
      .catch((e: unknown) => e)) as ServiceError;
    expect(err.code).toBe(14);
    expect(err.details).toBe("rate limit store unavailable (connection): connection refused");
  });

  it("reads header_map when Envoy sends raw headers", async () => {
    const raw = request({});
    const http = (raw as { attributes: { request: { http: Record<string, unknown> } } }).attributes.request
      .http;
    http.headers = {};
    http.header_map = {
      headers: [
        { key: "Authorization", raw_value: Buffer.from(bearer("raw").authorization) },
        { key: "x-client-id", raw_value: Buffer.from("a") },
        { key: "x-client-id", raw_value: Buffer.from("b") },
      ],
    };
    await harness.check(raw);
    expect(queries[0]?.descriptors[0]?.entries[0]).toEqual({ key: "tenant", value: "raw" });
    expect(queries[0]?.descriptors.length).toBe(2);
  });
});
