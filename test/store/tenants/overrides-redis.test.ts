/**
 * Tenant tier overrides on Redis: a change made through one instance is applied by another instance
 * of the same Redis within 1 s (pub/sub notice, not a poll: the resync is 30 s), survives a restart,
 * and works the same on a 3-master cluster.
 */
import { rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp, tempDir } from "../../config/watch-fixture.js";
import { type RedisCluster, type RedisServer, startCluster, startRedis } from "../../helpers/redis.js";
import { EDGE } from "../../helpers/tiers-fixture.js";

const TOKEN = "admin-s3cret";
const AUTH = { authorization: `Bearer ${TOKEN}` };

async function tierServed(app: TestApp, tenant: string): Promise<string | undefined> {
  const res = await app.http(`/v1/quota?domain=edge&descriptor=tenant=${tenant},route_class=read`);
  return ((await res.json()) as { descriptors: { tier?: string }[] }).descriptors[0]?.tier;
}

/** Ms until `app` serves `tenant` with `tier`, polling every 10 ms; fails after 3 s. */
async function msUntil(app: TestApp, tenant: string, tier: string, since: number): Promise<number> {
  for (;;) {
    if ((await tierServed(app, tenant)) === tier) return performance.now() - since;
    if (performance.now() - since > 3_000) throw new Error(`${tenant} never served ${tier}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

function suite(name: string, url: () => string): void {
  describe(`tenant overrides on ${name}`, () => {
    const apps: TestApp[] = [];
    let dir: string;
    const start = async () => {
      const app = await startTestApp(join(dir, "edge.yaml"), [
        ...["--store", url(), "--admin-token", TOKEN],
        ...["--tenants", join(dir, "tenants.csv"), "--reload-poll", "0s"],
      ]);
      apps.push(app);
      return app;
    };
    beforeAll(async () => {
      dir = await tempDir();
      await writeFile(join(dir, "edge.yaml"), EDGE);
      await writeFile(join(dir, "tenants.csv"), "tenant,tier\nacme,gold\n");
    });
    afterAll(async () => {
      for (const app of apps) await app.close();
      await rm(dir, { recursive: true, force: true });
    });

    it("a change through one instance is applied by the other within 1 s, and survives a restart", async () => {
      const a = await start();
      const b = await start();
      expect(await tierServed(b, "globex")).toBe("free");
      let since = performance.now();
      const res = await a.http("/v1/tenants/globex", {
        method: "PUT",
        headers: AUTH,
        body: '{"tier":"gold"}',
      });
      expect(res.status).toBe(200);
      expect(await res.json()).toMatchObject({ tier: "gold", store: "redis" });
      expect(await msUntil(b, "globex", "gold", since)).toBeLessThan(1_000);
      expect(await (await b.http("/v1/tenants/globex", { headers: AUTH })).json()).toMatchObject({
        override: "gold",
      });

      since = performance.now();
      expect(
        (await b.http("/v1/tenants/acme", { method: "PUT", headers: AUTH, body: '{"tier":"free"}' })).status,
      ).toBe(200);
      expect(await msUntil(a, "acme", "free", since)).toBeLessThan(1_000);
      since = performance.now();
      expect((await a.http("/v1/tenants/acme", { method: "DELETE", headers: AUTH })).status).toBe(200);
      expect(await msUntil(b, "acme", "gold", since)).toBeLessThan(1_000);

      // A new instance (a restart) loads the overrides at start.
      await a.close();
      apps.splice(apps.indexOf(a), 1);
      const c = await start();
      expect(await tierServed(c, "globex")).toBe("gold");
      expect(await c.text("/rlconfig")).toContain('# tenant override (redis): "globex" → gold');
    });
  });
}

let redis: RedisServer;
let cluster: RedisCluster;
beforeAll(async () => {
  [redis, cluster] = await Promise.all([startRedis(), startCluster({ masters: 3 })]);
});
afterAll(async () => {
  await Promise.all([redis?.stop(), cluster?.stop()]);
});

suite("one redis-server", () => redis.url);
suite("a 3-master cluster", () => cluster.url);
