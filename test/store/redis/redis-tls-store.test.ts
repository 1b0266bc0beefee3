import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Policy } from "../../../src/engine/types.js";
import { RedisStore } from "../../../src/store/redis/redis-store.js";
import { StoreError } from "../../../src/store/store.js";
import { startTlsRedis, type TlsRedisServer } from "../../helpers/redis-tls.js";

const gcra: Policy = { algorithm: "gcra", limit: 5, periodMs: 60_000, burst: 5 };

describe("RedisStore over TLS (rediss://)", () => {
  let server: TlsRedisServer;
  const stores: RedisStore[] = [];
  beforeAll(async () => {
    server = await startTlsRedis();
  });
  afterAll(async () => {
    await Promise.all(stores.map((s) => s.close()));
    await server?.stop();
  });

  it("connects with the CA file option and charges buckets", async () => {
    const store = new RedisStore({ url: server.url, tlsCaFile: server.caFile });
    stores.push(store);
    await store.ready();
    const out = await store.take([{ key: "tl:v1:{tls}:g0", policy: gcra, cost: 1 }]);
    expect(out[0]).toMatchObject({ allowed: true, remaining: 4 });
  });

  it("refuses a server certificate its CA does not vouch for", async () => {
    const store = new RedisStore({ url: server.url, readyTimeoutMs: 500, maxReconnectDelayMs: 100 });
    stores.push(store);
    const err = await store.ready().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StoreError);
    expect(err).toMatchObject({ code: "tls", transient: false });
    expect((err as StoreError).message).toMatch(/certificate/i);
  });
});
