/**
 * Every RLQS metric (`tollgate_rlqs_*`) reads what its help text says after a scripted scenario on
 * a running tollgate (the default transport, the own HTTP/2): known streams and reports in, exact
 * values out. The last check: no `tollgate_rlqs_` metric is left without a check here
 * (truth.test.ts leaves them to this file).
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as grpc from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
// @ts-expect-error: a plain .mjs module shared with bench/rlqs.mjs (no type declarations)
import { SimEnvoy } from "../../bench/rlqs-envoy.mjs";
import { TollgateMetrics } from "../../src/metrics/metrics.js";
import { parseExposition } from "../alerts/scrapes.js";
import { type RedisServer, startRedis } from "../helpers/redis.js";
import { type Service, startService } from "../helpers/service.js";

const CONFIG = `domain: edge
rlqs:
  keys: [{ key: tenant }]
  reporting_interval: 200ms
  assignment_ttl: 4s
  idle_intervals: 2
descriptors:
  - key: tenant
    value: vip
    rate_limit: { unlimited: true }
  - key: tenant
    value: blocked
    rate_limit: { unit: second, requests_per_unit: 0 }
  - key: tenant
    rate_limit: { unit: second, requests_per_unit: 100 }
`;

type Duplex = grpc.ClientDuplexStream<object, unknown>;
const covered = new Set<string>();
let svc: Service;
let degraded: Service;
let redis: RedisServer;

function open(address: string): { stream: Duplex; responses: unknown[]; done: Promise<number> } {
  const client = (new SimEnvoy({ address, domain: "edge", reportingIntervalMs: 1e9 }) as { client: unknown })
    .client as { StreamRateLimitQuotas(): Duplex };
  const stream = client.StreamRateLimitQuotas();
  const responses: unknown[] = [];
  stream.on("data", (d) => responses.push(d));
  const done = new Promise<number>((resolve) => {
    stream.on("error", (e: grpc.ServiceError) => resolve(e.code));
    stream.on("status", (s: grpc.StatusObject) => s.code === 0 && resolve(0));
  });
  return { stream, responses, done };
}

const usage = (tenant: string, n: number) => ({
  bucket_id: { bucket: { tenant } },
  time_elapsed: { seconds: 0, nanos: 200_000_000 },
  num_requests_allowed: n,
});

async function waitFor(ok: () => boolean, ms = 5000): Promise<void> {
  const until = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > until) throw new Error("timed out");
    await new Promise((r) => setTimeout(r, 20));
  }
}

async function value(
  s: Service,
  name: string,
  labels: Record<string, string> = {},
): Promise<number | undefined> {
  covered.add(name);
  const samples = parseExposition(await (await s.http("/metrics")).text());
  return samples.find((x) => x.name === name && Object.entries(labels).every(([k, v]) => x.labels[k] === v))
    ?.value;
}

beforeAll(async () => {
  const dir = mkdtempSync(join(tmpdir(), "tollgate-rlqs-truth-"));
  const config = join(dir, "edge.yaml");
  writeFileSync(config, CONFIG);
  redis = await startRedis();
  const args: string[] = []; // the default transport (the own HTTP/2)
  [svc, degraded] = await Promise.all([
    startService({ config, args }),
    startService({ config, store: redis.url, args: [...args, "--on-store-error", "allow"] }),
  ]);
}, 60_000);
afterAll(async () => {
  await Promise.all([svc?.stop(), degraded?.stop()]);
  await redis?.stop();
});

describe("RLQS metric truth", () => {
  it("scenario: one stream with three buckets, an idle bucket abandoned, a bad stream, a clean end", async () => {
    expect(await value(svc, "tollgate_rlqs_streams")).toBe(0);
    const a = open(svc.grpcAddress);
    a.stream.write({
      domain: "edge",
      bucket_quota_usages: [usage("acme", 1), usage("vip", 1), usage("blocked", 1)],
    });
    await waitFor(() => a.responses.length === 1);
    expect(await value(svc, "tollgate_rlqs_streams")).toBe(1);
    expect(await value(svc, "tollgate_rlqs_bucket_reports_total", { domain: "edge" })).toBe(3);
    for (const kind of ["token_bucket", "allow_all", "deny_all"])
      expect(await value(svc, "tollgate_rlqs_assignments_total", { domain: "edge", kind })).toBe(1);
    // Two reports without requests abandon acme (idle_intervals: 2).
    a.stream.write({ domain: "edge", bucket_quota_usages: [usage("acme", 0)] });
    a.stream.write({ domain: "edge", bucket_quota_usages: [usage("acme", 0)] });
    await waitFor(() => a.responses.length === 2);
    expect(await value(svc, "tollgate_rlqs_abandons_total", { domain: "edge" })).toBe(1);
    expect(await value(svc, "tollgate_rlqs_bucket_reports_total", { domain: "edge" })).toBe(5);

    const bad = open(svc.grpcAddress);
    bad.stream.write({ domain: "edge", bucket_quota_usages: [] });
    expect(await bad.done).toBe(grpc.status.INVALID_ARGUMENT);
    a.stream.end();
    expect(await a.done).toBe(0);
    await waitFor(() => true);
    expect(await value(svc, "tollgate_rlqs_streams_closed_total", { reason: "invalid_argument" })).toBe(1);
    expect(await value(svc, "tollgate_rlqs_streams_closed_total", { reason: "ok" })).toBe(1);
    expect(await value(svc, "tollgate_rlqs_streams_closed_total", { reason: "internal" })).toBe(0);
    expect(await value(svc, "tollgate_rlqs_streams")).toBe(0);
    // Unknown domains never become label values.
    expect(await value(svc, "tollgate_rlqs_bucket_reports_total", { domain: "" })).toBeUndefined();
  });

  it("counts board failures by the policy that answered", async () => {
    const s = open(degraded.grpcAddress);
    s.stream.write({ domain: "edge", bucket_quota_usages: [usage("acme", 1)] });
    await waitFor(() => s.responses.length === 1);
    expect(
      await value(degraded, "tollgate_rlqs_board_errors_total", { domain: "edge", policy: "allow" }),
    ).toBe(undefined);
    await redis.stop();
    s.stream.write({ domain: "edge", bucket_quota_usages: [usage("acme", 5)] });
    await waitFor(() => s.responses.length === 2, 10_000);
    expect(s.responses[1]).toMatchObject({
      bucket_action: [{ quota_assignment_action: { rate_limit_strategy: { blanket_rule: "ALLOW_ALL" } } }],
    });
    expect(
      await value(degraded, "tollgate_rlqs_board_errors_total", { domain: "edge", policy: "allow" }),
    ).toBe(1);
    s.stream.end();
  }, 30_000);

  it("leaves no tollgate_rlqs_ metric without a check here", async () => {
    const names = (await new TollgateMetrics({ processMetrics: false }).registry.getMetricsAsJSON())
      .map((m) => m.name)
      .filter((n) => n.startsWith("tollgate_rlqs_"));
    expect(names.length).toBe(6);
    expect(names.filter((n) => !covered.has(n))).toEqual([]);
  });
});
