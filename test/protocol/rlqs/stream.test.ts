/**
 * The RLQS stream on a running tollgate, on both gRPC transports (the own HTTP/2, the default, and
 * `--grpc-transport node`), through a client built on the official Envoy protos: assignments at once,
 * blanket rules from the same rules, bad input, a drain ending streams cleanly, and the stream bounds
 * set through settings (a client that stops reading its responses, frame by frame).
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
import { RateLimitRequestSchema } from "../../../src/gen/envoy/service/ratelimit/v3/rls_pb.js";
import { Status } from "../../../src/protocol/grpc/status.js";
import { HpackDecoder } from "../../../src/protocol/h2/hpack.js";
import { RLQS_PATH } from "../../../src/protocol/rlqs/service.js";
import { type Service, startService } from "../../helpers/service.js";
import { grpcFrame, openStream, rawCall, rawSession } from "../grpc/raw-client.js";
import {
  DATA,
  END_HEADERS,
  END_STREAM,
  type Frame,
  GOAWAY,
  HEADERS,
  frame as h2frame,
  headerLists,
  INITIAL_WINDOW_SIZE,
  RawConnection,
  requestBlock,
  SETTINGS,
  settings,
  u32,
  WINDOW_UPDATE,
} from "../h2/raw-h2.js";

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

const waitFor = async (ok: () => boolean | Promise<boolean>, ms = 5000) => {
  const until = Date.now() + ms;
  while (!(await ok())) {
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

/** The HEADERS blocks the server sent on stream `id`, decoded in connection order. */
const headersOf = (frames: readonly Frame[], id: number) => headerLists(frames, new HpackDecoder(), id);

describe("RLQS slow reader (--grpc-max-stream-unread-bytes)", () => {
  const services: Service[] = [];
  beforeAll(async () => {
    const dir = mkdtempSync(join(tmpdir(), "tollgate-rlqs-unread-"));
    const config = join(dir, "edge.yaml");
    writeFileSync(config, CONFIG);
    const args = ["--grpc-max-stream-unread-bytes", "4096"];
    services.push(
      ...(await Promise.all([
        startService({ config, args }),
        startService({ config, args: [...args, "--grpc-transport", "node"] }),
      ])),
    );
  }, 60_000);
  afterAll(async () => {
    await Promise.all(services.map((s) => s.stop()));
  });

  /** A report of 50 new buckets: an answer of 50 assignments (about 2.5 KB). */
  const report = (round: number, domain = true) =>
    h2frame(
      DATA,
      0,
      1,
      grpcFrame(
        toBinary(
          RateLimitQuotaUsageReportsSchema,
          create(RateLimitQuotaUsageReportsSchema, {
            ...(domain ? { domain: "edge" } : {}),
            bucketQuotaUsages: Array.from({ length: 50 }, (_, i) => ({
              bucketId: { bucket: { tenant: `r${round}-t${i}` } },
              numRequestsAllowed: 1n,
            })),
          }),
        ),
      ),
    );
  const closedSlow = async (s: Service) => {
    const text = await (await s.http("/metrics")).text();
    return Number(/tollgate_rlqs_streams_closed_total\{reason="slow_reader"\} (\d+)/.exec(text)?.[1] ?? 0);
  };

  it.each([
    ["tollgate", 0],
    ["node", 1],
  ])("%s transport: ends the stream RESOURCE_EXHAUSTED, keeps the connection and its other calls", async (_name, index) => {
    const service = services[index] as Service;
    const before = await closedSlow(service);
    const c = new RawConnection(service.grpcPort);
    try {
      // Grant no stream window: the server's answers park on the stream.
      c.open(settings([[INITIAL_WINDOW_SIZE, 0]]));
      c.send(h2frame(SETTINGS, 0x1, 0));
      c.send(h2frame(HEADERS, END_HEADERS, 1, requestBlock(RLQS_PATH)), report(0));
      for (let round = 1; round < 4; round++) c.send(report(round, false));
      // 4 answers of ~2.5 KB cannot all wait under 4 KiB: the stream is ended (not the connection).
      await waitFor(async () => (await closedSlow(service)) > before, 5000);
      // A unary call on the same connection is answered meanwhile.
      const rls = toBinary(
        RateLimitRequestSchema,
        create(RateLimitRequestSchema, {
          domain: "edge",
          descriptors: [{ entries: [{ key: "tenant", value: "acme" }] }],
        }),
      );
      c.send(
        h2frame(
          HEADERS,
          END_HEADERS,
          3,
          requestBlock("/envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit"),
        ),
        h2frame(WINDOW_UPDATE, 0, 3, u32(65_535)),
        h2frame(DATA, END_STREAM, 3, grpcFrame(rls)),
      );
      await c.until((fs) => headersOf(fs, 3).some((h) => h["grpc-status"] !== undefined), "the unary answer");
      expect(headersOf(c.frames, 3).at(-1)?.["grpc-status"]).toBe("0");
      // Reading again: what was parked arrives, then the trailers that ended the call.
      c.send(h2frame(WINDOW_UPDATE, 0, 1, u32(1 << 20)));
      await c.until((fs) => headersOf(fs, 1).some((h) => h["grpc-status"] !== undefined), "the trailers");
      const trailers = headersOf(c.frames, 1).at(-1) ?? {};
      expect(trailers["grpc-status"]).toBe(String(Status.RESOURCE_EXHAUSTED));
      expect(decodeURIComponent(trailers["grpc-message"] ?? "")).toBe("client is not reading its responses");
      const parked = c
        .of(1)
        .filter((f) => f.type === DATA)
        .reduce((n, f) => n + f.payload.length, 0);
      expect(parked).toBeGreaterThan(0); // the answers that fitted were kept, not dropped
      expect(parked).toBeLessThanOrEqual(4096);
      expect(c.frames.some((f) => f.type === GOAWAY)).toBe(false);
      expect(c.closed).toBe(false);
    } finally {
      c.close();
    }
  });
});
