import { mkdtempSync, writeFileSync } from "node:fs";
import { type ClientHttp2Session, connect } from "node:http2";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  RateLimitRequestSchema,
  RateLimitResponse_Code,
  RateLimitResponseSchema,
} from "../../src/gen/envoy/service/ratelimit/v3/rls_pb.js";
import { type RedisServer, startRedis } from "../helpers/redis.js";
import { type Service, startService } from "../helpers/service.js";

// One hot tenant: 300/second, burst 300, leased in batches of up to 30 for 250 ms.
const LIMIT = 300;
const CONFIG = `
domain: hot
descriptors:
  - key: tenant
    value: big
    lease: { size: 30, ttl: 250ms }
    rate_limit: { unit: second, requests_per_unit: ${LIMIT}, burst: ${LIMIT} }
  - key: tenant
    value: roomy
    # Leases sized for the rate: at this machine's worst (~100 decisions/s per process under a loaded
    # CI) a 200-token, 1 s lease expires half used and the fixed cost of a grant per lease dominates.
    lease: { size: 1000, ttl: 5s }
    rate_limit: { unit: second, requests_per_unit: 1000000 }
`;

function frameFor(tenant: string): Buffer {
  const msg = toBinary(
    RateLimitRequestSchema,
    create(RateLimitRequestSchema, {
      domain: "hot",
      descriptors: [{ entries: [{ key: "tenant", value: tenant }] }],
    }),
  );
  const f = Buffer.alloc(5 + msg.length);
  f.writeUInt32BE(msg.length, 1);
  f.set(msg, 5);
  return f;
}

function call(session: ClientHttp2Session, frame: Buffer): Promise<boolean> {
  return new Promise((resolve, reject) => {
    const s = session.request({
      ":method": "POST",
      ":path": "/envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit",
      "content-type": "application/grpc",
      te: "trailers",
    });
    const chunks: Buffer[] = [];
    s.on("data", (c: Buffer) => chunks.push(c));
    s.on("error", reject);
    s.on("close", () => {
      const body = Buffer.concat(chunks);
      if (body.length < 5) return reject(new Error("no response message"));
      resolve(
        fromBinary(RateLimitResponseSchema, body.subarray(5)).overallCode === RateLimitResponse_Code.OK,
      );
    });
    s.end(frame);
  });
}

const roundTrips = async (svc: Service) =>
  Number(
    /^tollgate_store_round_trips_total (\d+)/m.exec(await (await svc.http("/metrics")).text())?.[1] ?? 0,
  );

describe("two-tier limiting across three tollgate processes", () => {
  let redis: RedisServer;
  const services: Service[] = [];
  beforeAll(async () => {
    redis = await startRedis();
    const dir = mkdtempSync(join(tmpdir(), "tollgate-lease-"));
    writeFileSync(join(dir, "hot.yaml"), CONFIG);
    for (let i = 0; i < 3; i++)
      services.push(
        await startService({ config: dir, store: redis.url, args: ["--store-deadline", "50ms"] }),
      );
  });
  afterAll(async () => {
    for (const s of services) await s.stop();
    await redis?.stop();
  });

  /** Drive every service with 8 concurrent streams for `ms`; the admitted times and the decision count. */
  async function load(tenant: string, ms: number) {
    const frame = frameFor(tenant);
    const sessions = services.map((s) => connect(`http://${s.grpcAddress}`));
    const admittedAt: number[] = [];
    let decisions = 0;
    const started = Date.now();
    await Promise.all(
      sessions.flatMap((session) =>
        Array.from({ length: 8 }, async () => {
          while (Date.now() - started < ms) {
            const ok = await call(session, frame);
            decisions++;
            if (ok) admittedAt.push(Date.now());
          }
        }),
      ),
    );
    for (const s of sessions) s.close();
    return { admittedAt, decisions, elapsedSec: (Date.now() - started) / 1000 };
  }

  it("serves a hot key within its limit with at most 0.02 Redis round trips per decision", async () => {
    // Each process takes its first lease in a warm-up: the window measures the steady state. On a
    // loaded CI machine the node:http2 client drives only ~100 decisions/s per process, so the three
    // first grants alone (3 round trips over ~150 decisions) sat right at the bound.
    await load("roomy", 300);
    const before = await Promise.all(services.map(roundTrips));
    const { admittedAt, decisions } = await load("roomy", 1500);
    const after = await Promise.all(services.map(roundTrips));
    const calls = after.reduce((n, a, i) => n + a - (before[i] ?? 0), 0);
    console.info(
      `lease within limit: ${decisions} decisions, ${(calls / decisions).toFixed(4)} round trips per decision`,
    );
    expect(admittedAt.length).toBe(decisions);
    expect(calls / decisions).toBeLessThanOrEqual(0.02);
  });

  it("admits no more than the limit over sustained load, with few Redis calls per decision, and returns leases on shutdown", async () => {
    const before = await Promise.all(services.map(roundTrips));
    const { admittedAt, decisions, elapsedSec } = await load("big", 3000);
    // GCRA bound over the whole run: the burst plus the rate times the time elapsed.
    expect(admittedAt.length).toBeLessThanOrEqual(LIMIT + LIMIT * elapsedSec);
    // And in every 1 s interval: leased tokens may be spent up to the lease ttl (250 ms) after Redis
    // counted them, so the bound is burst + rate × (1 s + ttl) (docs/lease.md).
    for (const t of admittedAt) {
      const inWindow = admittedAt.filter((x) => x >= t && x < t + 1000).length;
      expect(inWindow).toBeLessThanOrEqual(LIMIT + LIMIT * 1.25);
    }
    // Leases keep the shared bucket busy: at least most of the rate is admitted (stranding is bounded).
    expect(admittedAt.length).toBeGreaterThanOrEqual(LIMIT * (elapsedSec - 1));
    const after = await Promise.all(services.map(roundTrips));
    const calls = after.reduce((n, a, i) => n + a - (before[i] ?? 0), 0);
    console.info(
      `lease service: ${decisions} decisions, ${admittedAt.length} admitted in ${elapsedSec.toFixed(2)} s, ${(calls / decisions).toFixed(4)} Redis round trips per decision`,
    );
    expect(calls / decisions).toBeLessThan(0.5); // over the limit: about one refill per quarter lease per instance (0.05 on an idle machine)

    // Shutdown drains cleanly (exit 0, leases returned) and leaves no key without a TTL.
    for (const s of services) expect(await s.stop()).toBe(0);
    const keys = await redis.client().keys("tl:v1:*");
    for (const k of keys) expect(await redis.client().pttl(k)).toBeGreaterThan(0);
  });
});
