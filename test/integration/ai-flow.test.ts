/**
 * The AI-gateway token budget replayed through gRPC, on every store (memory, redis-server, a 3-master
 * Redis Cluster), with a client on the OFFICIAL Envoy protos (plus the later `hits_addend` and
 * `is_negative_hits` fields, see ratelimit-overlay.ts): a check-only request (per-descriptor
 * hits_addend 0) admitted, the stream-done charge past the remainder applied into debt, the next check
 * denied with a reset time and Retry-After, a refund (`is_negative_hits`), and a check admitted again.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createRlsClient, type RlsClient } from "../helpers/official-client.js";
import { ratelimitOverlay } from "../helpers/ratelimit-overlay.js";
import { type RedisCluster, type RedisServer, startCluster, startRedis } from "../helpers/redis.js";
import { type Service, startService } from "../helpers/service.js";

const CONFIG = `
domain: ai
descriptors:
  - key: tokens
    overdraft: true
    rate_limit: { unit: hour, requests_per_unit: 1000, name: tokens_per_hour }
  - key: requests
    rate_limit: { unit: minute, requests_per_unit: 100 }
`;

interface Backend {
  readonly name: string;
  start(): Promise<{ store: string; stop(): Promise<void> }>;
}

const BACKENDS: readonly Backend[] = [
  { name: "memory", start: async () => ({ store: "memory", stop: async () => {} }) },
  {
    name: "redis",
    async start() {
      const server: RedisServer = await startRedis();
      return { store: server.url, stop: () => server.stop() };
    },
  },
  {
    name: "redis-cluster",
    async start() {
      const cluster: RedisCluster = await startCluster({ masters: 3 });
      return { store: cluster.url, stop: () => cluster.stop() };
    },
  },
];

/** One descriptor: entries, a per-descriptor hits_addend, and is_negative_hits for a refund. */
const descriptor = (entries: [string, string][], hits: number, refund = false) => ({
  entries: entries.map(([key, value]) => ({ key, value })),
  hits_addend: { value: hits },
  is_negative_hits: refund,
});

describe.each(BACKENDS)("the AI token flow over gRPC on $name", (backend) => {
  let stopStore: () => Promise<void>;
  let svc: Service;
  let client: RlsClient;
  beforeAll(async () => {
    const started = await backend.start();
    stopStore = started.stop;
    const dir = mkdtempSync(join(tmpdir(), "tollgate-ai-"));
    writeFileSync(join(dir, "ai.yaml"), CONFIG);
    // A deadline this loaded machine meets: a late store answer would be the local fallback's.
    svc = await startService({
      config: dir,
      store: started.store,
      args: ["--response-headers", "draft03", "--store-deadline", "1s"],
    });
    client = createRlsClient(svc.grpcAddress, undefined, ratelimitOverlay());
  }, 60_000);
  afterAll(async () => {
    client?.close();
    await svc?.stop();
    await stopStore?.();
  });

  const call = (...descriptors: ReturnType<typeof descriptor>[]) =>
    client.shouldRateLimit({ domain: "ai", descriptors });
  const tokens = (tenant: string): [string, string][] => [["tokens", tenant]];

  it("admits a check, applies a charge past the remainder, denies the next check until a refund", async () => {
    expect((await call(descriptor(tokens("acme"), 900))).overall_code).toBe("OK");
    const check = await call(descriptor(tokens("acme"), 0));
    expect(check.overall_code).toBe("OK");
    expect(check.statuses[0]?.limit_remaining).toBe(100);

    // Stream done: 5,000 tokens with 100 left (Envoy ignores this answer). Applied in full.
    const done = await call(descriptor(tokens("acme"), 5000));
    expect(done.statuses[0]).toMatchObject({ code: "OK", limit_remaining: 0 });

    // 4,900 tokens of debt at 1,000 an hour: one token is back after 4,901 × 3.6 s = 17,643.6 s.
    const denied = await call(descriptor(tokens("acme"), 0));
    expect(denied.overall_code).toBe("OVER_LIMIT");
    expect(denied.statuses[0]?.code).toBe("OVER_LIMIT");
    const reset = denied.statuses[0]?.duration_until_reset?.seconds ?? 0;
    expect(reset).toBeGreaterThanOrEqual(17_643);
    expect(reset).toBeLessThanOrEqual(17_644);
    const retryAfter = denied.response_headers_to_add.find((h) => h.key.toLowerCase() === "retry-after");
    expect(Number(retryAfter?.value)).toBe(reset);

    // Reserve-and-settle: 4,950 tokens back.
    const refund = await call(descriptor(tokens("acme"), 4950, true));
    expect(refund.overall_code).toBe("OK");
    const again = await call(descriptor(tokens("acme"), 0));
    expect(again.overall_code).toBe("OK");
    expect(again.statuses[0]?.limit_remaining).toBe(50);
  });

  it("charges every stream-done descriptor of one call although one of them is already in debt", async () => {
    await call(descriptor(tokens("in-debt"), 1500));
    const done = await call(descriptor(tokens("in-debt"), 10), descriptor(tokens("fresh"), 300));
    expect(done.overall_code).toBe("OVER_LIMIT");
    expect(done.statuses[1]).toMatchObject({ code: "OK", limit_remaining: 700 });
    expect((await call(descriptor(tokens("fresh"), 0))).statuses[0]?.limit_remaining).toBe(700);
    // The charge on the indebted bucket landed too: 510 tokens of debt, 511 × 3.6 s to one token.
    const check = await call(descriptor(tokens("in-debt"), 0));
    expect(check.statuses[0]?.duration_until_reset?.seconds).toBeGreaterThanOrEqual(1839);
  });

  it("keeps all-or-nothing for an ordinary rule beside an indebted overdraft rule", async () => {
    await call(descriptor(tokens("busy"), 2000));
    const r = await call(descriptor(tokens("busy"), 0), descriptor([["requests", "busy"]], 1));
    expect(r.overall_code).toBe("OVER_LIMIT");
    const requests = await call(descriptor([["requests", "busy"]], 0));
    expect(requests.statuses[0]?.limit_remaining).toBe(100);
  });
});
