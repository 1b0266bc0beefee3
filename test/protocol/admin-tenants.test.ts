/**
 * The tenant admin API (`PUT`/`GET`/`DELETE /v1/tenants/{tenant}`) on the memory store: overrides
 * over the tenants file, applied to decisions at once, validated, authenticated, audited, listed on
 * /rlconfig. The Redis side (every instance within 1 s, restarts) is in overrides-redis.test.ts.
 */
import { rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { startTestApp, type TestApp, tempDir } from "../config/watch-fixture.js";
import { EDGE } from "../helpers/tiers-fixture.js";

const TOKEN = "admin-s3cret";
const AUTH = { authorization: `Bearer ${TOKEN}` };
let t: TestApp | undefined;
let dir: string | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
  if (dir) await rm(dir, { recursive: true, force: true });
});

async function start(args: readonly string[] = ["--admin-token", TOKEN]): Promise<TestApp> {
  dir = await tempDir();
  const tenants = join(dir, "tenants.csv");
  await writeFile(join(dir, "edge.yaml"), EDGE);
  await writeFile(tenants, "tenant,tier\nacme,gold\n");
  t = await startTestApp(join(dir, "edge.yaml"), ["--tenants", tenants, "--reload-poll", "0s", ...args]);
  return t;
}

const put = (app: TestApp, tenant: string, body: string, headers: Record<string, string> = AUTH) =>
  app.http(`/v1/tenants/${tenant}`, { method: "PUT", body, headers });

async function tierServed(app: TestApp, tenant: string): Promise<string | undefined> {
  const res = await app.http(`/v1/quota?domain=edge&descriptor=tenant=${tenant},route_class=read`);
  return ((await res.json()) as { descriptors: { tier?: string }[] }).descriptors[0]?.tier;
}

describe("tenant admin API", () => {
  it("PUT overrides the tenants file at once, GET reports it, DELETE goes back to the file", async () => {
    const app = await start();
    expect(await tierServed(app, "globex")).toBe("free");
    const res = await put(app, "globex", '{"tier":"gold"}');
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({
      tenant: "globex",
      tier: "gold",
      override: "gold",
      fileTier: null,
      previousOverride: null,
      store: "memory",
    });
    expect(await tierServed(app, "globex")).toBe("gold");
    // An override also wins over the tenants file.
    expect((await put(app, "acme", '{"tier":"free"}')).status).toBe(200);
    expect(await tierServed(app, "acme")).toBe("free");
    const got = await app.http("/v1/tenants/acme", { headers: AUTH });
    expect(await got.json()).toEqual({
      tenant: "acme",
      tier: "free",
      override: "free",
      fileTier: "gold",
      store: "memory",
    });
    expect(await app.text("/rlconfig")).toContain('# tenant override (memory): "acme" → free');
    const del = await app.http("/v1/tenants/acme", { method: "DELETE", headers: AUTH });
    expect(del.status).toBe(200);
    expect(await del.json()).toMatchObject({ tier: "gold", override: null, previousOverride: "free" });
    expect(await tierServed(app, "acme")).toBe("gold");
    const again = await app.http("/v1/tenants/acme", { method: "DELETE", headers: AUTH });
    expect(again.status).toBe(404);
    expect(await again.json()).toEqual({ error: 'tenant "acme" has no tier override' });
  });

  it("logs every change as one audit line: who, tenant, old and new", async () => {
    const app = await start();
    await put(app, "globex", '{"tier":"gold"}');
    await put(app, "globex", '{"tier":"free"}');
    await app.http("/v1/tenants/globex", { method: "DELETE", headers: AUTH });
    const audit = app.logs.filter((l) => l.audit === "tenant_tier");
    expect(audit.map((l) => [l.action, l.tenant, l.old, l.new])).toEqual([
      ["set", "globex", null, "gold"],
      ["set", "globex", "gold", "free"],
      ["delete", "globex", "free", null],
    ]);
    expect(audit[0]?.who).toMatchObject({ credential: "admin-token" });
    expect(String((audit[0]?.who as { remote: string }).remote)).toMatch(/127\.0\.0\.1/);
    expect(audit[0]?.msg).toBe("tenant tier override changed");
  });

  it("refuses an unknown tier with 400 naming the defined tiers, and bad bodies with the reason", async () => {
    const app = await start();
    const cases: [string, number, string][] = [
      ['{"tier":"platinum"}', 400, 'unknown tier "platinum" (defined: free, gold)'],
      ["{tier: gold}", 400, "body is not JSON: "],
      ['"gold"', 400, 'body must be {"tier": "<name>"}'],
      ['{"tier":""}', 400, 'body must be {"tier": "<name>"}'],
      ['{"tier":"gold","plan":"x"}', 400, 'body must be {"tier": "<name>"}; unknown field "plan"'],
      [JSON.stringify({ tier: "gold".repeat(300) }), 413, "body larger than 1024 bytes"],
    ];
    for (const [body, status, error] of cases) {
      const res = await put(app, "globex", body);
      expect(res.status, body).toBe(status);
      expect(((await res.json()) as { error: string }).error, body).toContain(error);
    }
    expect(await tierServed(app, "globex")).toBe("free");
    expect(app.logs.filter((l) => l.audit === "tenant_tier")).toEqual([]);
  });

  it("decodes the tenant path segment and refuses an empty one", async () => {
    const app = await start();
    expect((await put(app, "team%2Fa%20b", '{"tier":"gold"}')).status).toBe(200);
    expect(await (await app.http("/v1/tenants/team%2Fa%20b", { headers: AUTH })).json()).toMatchObject({
      tenant: "team/a b",
      tier: "gold",
    });
    const empty = await put(app, "", '{"tier":"gold"}');
    expect(empty.status).toBe(400);
    expect(await empty.json()).toEqual({ error: "missing tenant (PUT /v1/tenants/{tenant})" });
  });

  it("needs the bearer token, and is disabled without one", async () => {
    const app = await start();
    const none = await put(app, "globex", '{"tier":"gold"}', {});
    expect(none.status).toBe(401);
    expect(none.headers.get("www-authenticate")).toBe("Bearer");
    expect((await put(app, "globex", '{"tier":"gold"}', { authorization: "Bearer wrong" })).status).toBe(401);
    expect((await app.http("/v1/tenants/globex")).status).toBe(401);
    await app.close();
    t = undefined;
    const off = await start([]);
    const res = await put(off, "globex", '{"tier":"gold"}');
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({
      error: "the tenant admin API is disabled: set --admin-token (TOLLGATE_ADMIN_TOKEN)",
    });
  });

  it("accepts the deprecated --reset-token as the admin token", async () => {
    const app = await start(["--reset-token", TOKEN]);
    expect((await put(app, "globex", '{"tier":"gold"}')).status).toBe(200);
  });
});
