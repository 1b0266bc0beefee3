/**
 * The RLQS stream on a running tollgate, on both gRPC transports (the own HTTP/2, the default, and
 * `--grpc-transport node`), through a client built on the official Envoy protos: assignments at once,
 * blanket rules from the same rules, bad input, a drain ending streams cleanly, and the stream bounds
 * set through settings.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { create, toBinary } from "@bufbuild/protobuf";
import * as grpc from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
// @ts-expect-error: a plain .mjs module shared with bench/rlqs.mjs (no type declarations)
import { SimEnvoy } from "../../../bench/rlqs-envoy.mjs";
import { RateLimitQuotaUsageReportsSchema } from "../../../src/gen/envoy/service/rate_limit_quota/v3/rlqs_pb.js";
import { Status } from "../../../src/protocol/grpc/status.js";
import { RLQS_PATH } from "../../../src/protocol/rlqs/service.js";
import { type Service, startService } from "../../helpers/service.js";
import { grpcFrame, openStream, rawCall, rawSession } from "../grpc/raw-client.js";

const CONFIG = `domain: edge
rlqs:
  keys: [{ key: tenant }, { key: route_class, required: false }]
  assignment_ttl: 4s
  reporting_interval: 200ms
  idle_intervals: 3
descriptors:
  - key: tenant
    value: blocked
    rate_limit: { unit: second, requests_per_unit: 0 }
  - key: tenant
    value: vip
    rate_limit: { unlimited: true }
  - key: tenant
    rate_limit: { unit: second, requests_per_unit: 100, burst: 10 }
`;

interface Raw {
  responses: unknown[];
  status: Promise<{ code: number; details: string }>;
  write(msg: object): void;
  end(): void;
}

type SimEnvoyT = {
  request(bucket: Record<string, string>): boolean;
  rateOf(bucket: Record<string, string>): number | undefined;
  responses: number;
  streamEnds: { code: number; details: string }[];
  close(): void;
};

function rawStream(address: string): Raw {
  const Ctor = (
    new SimEnvoy({ address, domain: "x", reportingIntervalMs: 1e9 }) as unknown as {
      client: grpc.Client & { close(): void };
    }
  ).client;
  const stream = (
    Ctor as unknown as { StreamRateLimitQuotas(): grpc.ClientDuplexStream<object, unknown> }
  ).StreamRateLimitQuotas();
  const responses: unknown[] = [];
  stream.on("data", (d) => responses.push(d));
  const status = new Promise<{ code: number; details: string }>((resolve) => {
    stream.on("error", (e: grpc.ServiceError) => resolve({ code: e.code, details: e.details }));
    stream.on("status", (s: grpc.StatusObject) => {
      if (s.code === 0) resolve({ code: 0, details: s.details });
    });
  });
  return { responses, status, write: (m) => stream.write(m), end: () => stream.end() };
}

const waitFor = async (ok: () => boolean, ms = 5000) => {
  const until = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > until) throw new Error("timed out");
    await new Promise((r) => setTimeout(r, 20));
  }
};

let node: Service;
let own: Service;
beforeAll(async () => {
  const dir = mkdtempSync(join(tmpdir(), "tollgate-rlqs-"));
  const config = join(dir, "edge.yaml");
  writeFileSync(config, CONFIG);
  [node, own] = await Promise.all([
    startService({ config, args: ["--grpc-transport", "node"] }),
    startService({ config }),
  ]);
}, 60_000);
afterAll(async () => {
  await Promise.all([node?.stop(), own?.stop()]);
});

const SERVICES: readonly [string, () => Service][] = [
  ["tollgate", () => own],
  ["node", () => node],
];

describe.each(SERVICES)("RLQS stream (%s transport)", (_name, service) => {
  it("answers a new bucket's first report at once, from the same rules", async () => {
    const envoy: SimEnvoyT = new SimEnvoy({
      address: service().grpcAddress,
      domain: "edge",
      reportingIntervalMs: 200,
    });
    try {
      envoy.request({ tenant: "acme" });
      envoy.request({ tenant: "vip" });
      envoy.request({ tenant: "blocked" });
      await waitFor(() => envoy.responses >= 3, 3000);
      // One Envoy holds the whole limit: 100/s as 1000 tokens per 10 s, burst 10.
      expect(envoy.rateOf({ tenant: "acme" })).toBe(100);
      expect(envoy.request({ tenant: "vip" })).toBe(true);
      expect(envoy.request({ tenant: "blocked" })).toBe(false);
    } finally {
      envoy.close();
    }
  });

  it("abandons a bucket after idle_intervals reports without requests", async () => {
    const raw = rawStream(service().grpcAddress);
    const usage = (n: number) => ({
      domain: "edge",
      bucket_quota_usages: [
        {
          bucket_id: { bucket: { tenant: "idle" } },
          time_elapsed: { seconds: 0, nanos: 200_000_000 },
          num_requests_allowed: n,
          num_requests_denied: 0,
        },
      ],
    });
    raw.write(usage(1));
    await waitFor(() => raw.responses.length === 1);
    for (let i = 0; i < 3; i++) raw.write(usage(0));
    await waitFor(() => raw.responses.length === 2);
    expect(raw.responses[1]).toMatchObject({
      bucket_action: [{ bucket_id: { bucket: { tenant: "idle" } }, bucket_action: "abandon_action" }],
    });
    raw.end();
    expect(await raw.status).toEqual({ code: 0, details: "" });
  });

  it.each([
    [
      { bucket_quota_usages: [{ bucket_id: { bucket: { tenant: "a" } } }] },
      "the first usage report of a stream must set domain",
    ],
    [
      { domain: "nope", bucket_quota_usages: [{ bucket_id: { bucket: { tenant: "a" } } }] },
      'domain "nope" has no rlqs section in the config',
    ],
    [{ domain: "edge", bucket_quota_usages: [] }, "bucket_quota_usages is empty"],
    [{ domain: "edge", bucket_quota_usages: [{}] }, "bucket_quota_usages[0].bucket_id is required"],
    [
      { domain: "edge", bucket_quota_usages: [{ bucket_id: { bucket: { route_class: "read" } } }] },
      'bucket_quota_usages[0]: bucket_id lacks the required key "tenant"',
    ],
  ])("ends a stream with bad input INVALID_ARGUMENT: %j", async (msg, reason) => {
    const raw = rawStream(service().grpcAddress);
    raw.write(msg);
    expect(await raw.status).toEqual({ code: grpc.status.INVALID_ARGUMENT, details: reason });
  });
});

describe.each(SERVICES)("RLQS drain (%s transport)", (_name, service) => {
  it("ends open streams with OK on shutdown", async () => {
    const raw = rawStream(service().grpcAddress);
    raw.write({
      domain: "edge",
      bucket_quota_usages: [{ bucket_id: { bucket: { tenant: "drain" } }, num_requests_allowed: 1 }],
    });
    await waitFor(() => raw.responses.length === 1);
    const exited = service().stop("SIGTERM");
    expect(await raw.status).toEqual({ code: 0, details: "" });
    expect(await exited).toBe(0);
  });
});

describe("RLQS stream bounds from settings (--grpc-max-streaming-calls, --rlqs-stream-idle-timeout)", () => {
  let bounded: Service;
  beforeAll(async () => {
    const dir = mkdtempSync(join(tmpdir(), "tollgate-rlqs-bounds-"));
    const config = join(dir, "edge.yaml");
    writeFileSync(config, CONFIG);
    bounded = await startService({
      config,
      args: ["--grpc-max-streaming-calls", "2", "--rlqs-stream-idle-timeout", "400ms"],
    });
  }, 60_000);
  afterAll(async () => {
    await bounded?.stop();
  });

  const report = (tenant: string) =>
    grpcFrame(
      toBinary(
        RateLimitQuotaUsageReportsSchema,
        create(RateLimitQuotaUsageReportsSchema, {
          domain: "edge",
          bucketQuotaUsages: [{ bucketId: { bucket: { tenant } }, numRequestsAllowed: 1n }],
        }),
      ),
    );

  it("refuses a third stream on one connection, and ends a stream idle for the configured time OK", async () => {
    const session = await rawSession(bounded.grpcPort);
    try {
      const open = (tenant: string) => {
        const call = openStream(session, RLQS_PATH);
        call.req.write(report(tenant));
        return call;
      };
      const a = open("a");
      const b = open("b");
      await waitFor(() => a.data.length > 0 && b.data.length > 0);
      const third = await rawCall(session, { path: RLQS_PATH, chunks: [report("c")] });
      expect(third.trailers?.["grpc-status"] ?? third.headers["grpc-status"]).toBe(
        String(Status.RESOURCE_EXHAUSTED),
      );
      // Neither a nor b reports again: each ends OK, naming the idle time, within a few seconds.
      const [ta, tb] = await Promise.all([a.trailers, b.trailers]);
      for (const t of [ta, tb]) {
        expect(t["grpc-status"]).toBe("0");
        expect(decodeURIComponent(String(t["grpc-message"]))).toBe("no usage report for 400 ms");
      }
    } finally {
      session.destroy();
    }
  });
});
