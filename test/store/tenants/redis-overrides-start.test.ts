/**
 * Tenant overrides when Redis is not there at start: the service must not refuse to start (the
 * store's breaker starts open and the failure policy answers), so the override table starts empty
 * and follows Redis once it is up — subscribed then, not only at start.
 */
import { afterEach, describe, expect, it } from "vitest";
import { createTenantOverrides } from "../../../src/store/tenants/create.js";
import type { OverrideTable, TenantOverrideStore } from "../../../src/store/tenants/overrides.js";
import { freePort, type RedisServer, startRedis } from "../../helpers/redis.js";

describe("tenant overrides with Redis down at start", () => {
  let store: TenantOverrideStore | undefined;
  let redis: RedisServer | undefined;
  afterEach(async () => {
    await store?.close();
    await redis?.stop();
  });

  it("opens with an empty table, reports the error, and applies changes once Redis is up", async () => {
    const port = await freePort();
    const errors: unknown[] = [];
    store = createTenantOverrides(
      { store: `redis://127.0.0.1:${port}`, keyPrefix: "", redisTlsCaFile: "" },
      (err) => errors.push(err),
    );
    const tables: OverrideTable[] = [];
    const first = await store.open((t) => tables.push(t));
    expect(first.size).toBe(0);
    expect(String(errors[0])).toMatch(/tenant overrides read failed \(connection\)/);

    redis = await startRedis({ port });
    // A change made through the same store (queued until connected) is published; only a subscription
    // made after Redis came up can hear it.
    await store.set("acme", "gold");
    const deadline = Date.now() + 10_000;
    while (!tables.some((t) => t.get("acme") === "gold")) {
      if (Date.now() > deadline) throw new Error("the change made after Redis came up was never applied");
      await new Promise((r) => setTimeout(r, 50));
    }
  }, 30_000);
});
