import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { guardStatus } from "../chaos/load.js";
import { type RlsClient, rlsClient } from "../chaos/rls-client.js";
import { keysWithoutTtl, type RedisServer, startRedis } from "../helpers/redis.js";
import { type Service, startService } from "../helpers/service.js";

const CONFIG = `
domain: edge
descriptors:
  - key: tenant
    rate_limit: { unit: minute, requests_per_unit: 3, name: per_tenant }
`;

const jsonBody = (tenant: string) =>
  JSON.stringify({ domain: "edge", descriptors: [{ entries: [{ key: "tenant", value: tenant }] }] });

describe("the service on a redis-server store", () => {
  let redis: RedisServer;
  let svc: Service;
  let client: RlsClient;
  beforeAll(async () => {
    redis = await startRedis();
    const dir = mkdtempSync(join(tmpdir(), "tollgate-redis-it-"));
    writeFileSync(join(dir, "edge.yaml"), CONFIG);
    svc = await startService({ config: dir, store: redis.url, args: ["--store-deadline", "1s"] });
    client = rlsClient(svc.grpcPort);
  });
  afterAll(async () => {
    client?.close();
    await svc?.stop();
    await redis?.stop();
  });

  it("decides over gRPC and /json from one bucket in Redis", async () => {
    const first = await client.call("edge", [[["tenant", "acme"]]]);
    expect(first).toMatchObject({ grpcStatus: 0, code: "OK", remaining: [2] });
    const viaJson = await svc.http("/json", { method: "POST", body: jsonBody("acme") });
    expect(viaJson.status).toBe(200);
    expect(
      ((await viaJson.json()) as { statuses: { limitRemaining: number }[] }).statuses[0]?.limitRemaining,
    ).toBe(1);
    expect((await client.call("edge", [[["tenant", "acme"]]])).remaining).toEqual([0]);
    const over = await svc.http("/json", { method: "POST", body: jsonBody("acme") });
    expect(over.status).toBe(429);
    const keys = await redis.client().keys("*tenant=acme*");
    expect(keys).toEqual(["tl:v1:{edge|tenant=acme}:g0"]);
  });

  it("leaves no key without a TTL", async () => {
    await client.call("edge", [[["tenant", "ttl-check"]]]);
    expect(await keysWithoutTtl(redis.client())).toEqual([]);
  });

  it("shows the guarded Redis store, closed, on /rlconfig and its breaker on /metrics", async () => {
    expect(await guardStatus(svc)).toMatchObject({ kind: "guard(redis)", state: "closed" });
    const metrics = await (await svc.http("/metrics")).text();
    expect(metrics).toMatch(/^tollgate_degraded 0$/m);
  });

  it("keeps deciding from Redis after Redis restarts, without restarting tollgate", async () => {
    await redis.restart();
    const key = "tl:v1:{edge|tenant=after-restart}:g0";
    const probe = redis.client();
    // The first calls may fail over to the fallback while ioredis reconnects; within 3 s one lands.
    let onRedis = false;
    for (let i = 0; i < 100 && !onRedis; i++) {
      expect((await client.call("edge", [[["tenant", "after-restart"]]])).grpcStatus).toBe(0);
      onRedis = (await probe.exists(key)) === 1;
      if (!onRedis) await new Promise((r) => setTimeout(r, 30));
    }
    expect(onRedis).toBe(true);
    expect(await guardStatus(svc)).toMatchObject({ state: "closed" });
  });
});
