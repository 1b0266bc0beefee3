import { rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { startTestApp, type TestApp, tempDir } from "../config/watch-fixture.js";

const CONFIG = `domain: edge
descriptors:
  - key: tenant
    rate_limit: { unit: minute, requests_per_unit: 5 }
  - key: api
    shards: 4
    rate_limit: { unit: second, requests_per_unit: 400 }
`;
const TOKEN = "s3cret-token";

let t: TestApp | undefined;
let dir: string | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
  if (dir) await rm(dir, { recursive: true, force: true });
});

async function start(args: readonly string[] = ["--reset-token", TOKEN]): Promise<TestApp> {
  dir = await tempDir();
  await writeFile(join(dir, "edge.yaml"), CONFIG);
  t = await startTestApp(join(dir, "edge.yaml"), args);
  return t;
}

const hit = (app: TestApp, tenant: string, hits = 1) =>
  app.http("/json", {
    method: "POST",
    body: JSON.stringify({
      domain: "edge",
      hitsAddend: hits,
      descriptors: [{ entries: [{ key: "tenant", value: tenant }] }],
    }),
  });

async function quota(app: TestApp, selector: string) {
  const res = await app.http(`/v1/quota?${selector}`);
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

const reset = (app: TestApp, selector: string, auth?: string) =>
  app.http(`/v1/reset?${selector}`, {
    method: "POST",
    ...(auth === undefined ? {} : { headers: { authorization: auth } }),
  });

describe("GET /v1/quota", () => {
  it("reports limit, remaining and reset without consuming", async () => {
    const app = await start();
    await hit(app, "acme", 2);
    const first = await quota(app, "domain=edge&descriptor=tenant=acme");
    const second = await quota(app, "domain=edge&descriptor=tenant=acme");
    expect(first.status).toBe(200);
    expect(first.body).toEqual({
      domain: "edge",
      descriptors: [
        {
          entries: { tenant: "acme" },
          code: "OK",
          limit: { requestsPerUnit: 5, unit: "MINUTE" },
          remaining: 3,
          resetSeconds: 24,
        },
      ],
    });
    expect(second.body).toEqual(first.body);
    expect((await (await hit(app, "acme", 3)).json()) as unknown).toMatchObject({ overallCode: "OK" });
  });

  it("answers several descriptors, and null limits for a descriptor no rule matches", async () => {
    const app = await start();
    const { body } = await quota(app, "domain=edge&descriptor=tenant=a&descriptor=user=u1,x=y");
    const descriptors = body.descriptors as Record<string, unknown>[];
    expect(descriptors.map((d) => d.remaining)).toEqual([5, null]);
    expect(descriptors[1]).toMatchObject({ entries: { user: "u1", x: "y" }, code: "OK", limit: null });
  });

  it("refuses a bad selector with the reason", async () => {
    const app = await start();
    expect(await quota(app, "descriptor=tenant=a")).toEqual({
      status: 400,
      body: { error: "missing domain (e.g. ?domain=edge&descriptor=tenant=acme)" },
    });
    expect((await quota(app, "domain=edge")).status).toBe(400);
    expect((await quota(app, "domain=edge&descriptor=tenant")).body).toEqual({
      error: 'descriptor entry "tenant" is not key=value',
    });
  });
});

describe("POST /v1/reset", () => {
  it("refills the bucket when the bearer token matches", async () => {
    const app = await start();
    await hit(app, "acme", 5);
    expect((await hit(app, "acme")).status).toBe(429);
    const res = await reset(app, "domain=edge&descriptor=tenant=acme", `Bearer ${TOKEN}`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ domain: "edge", reset: 1 });
    const after = await quota(app, "domain=edge&descriptor=tenant=acme");
    expect((after.body.descriptors as Record<string, unknown>[])[0]?.remaining).toBe(5);
    expect((await hit(app, "other", 5)).status).toBe(200);
  });

  it("resets every shard of a sharded rule", async () => {
    const app = await start();
    const res = await reset(app, "domain=edge&descriptor=api=search", `Bearer ${TOKEN}`);
    expect(await res.json()).toEqual({ domain: "edge", reset: 4 });
  });

  it("refuses a missing or wrong token and leaves the bucket alone", async () => {
    const app = await start();
    await hit(app, "acme", 5);
    for (const auth of [undefined, "Bearer wrong", `Basic ${TOKEN}`, "Bearer ", `Bearer ${TOKEN}x`]) {
      const res = await reset(app, "domain=edge&descriptor=tenant=acme", auth);
      expect(res.status).toBe(401);
      expect(res.headers.get("www-authenticate")).toBe("Bearer");
    }
    expect((await hit(app, "acme")).status).toBe(429);
  });

  it("is disabled, with the reason, when no reset token is set", async () => {
    const app = await start([]);
    const res = await reset(app, "domain=edge&descriptor=tenant=acme", "Bearer ");
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({
      error: "reset is disabled: set --admin-token (TOLLGATE_ADMIN_TOKEN) to enable it",
    });
  });
});

describe("JSON names on the HTTP port", () => {
  /** Every object key of `v`, except inside `entries` (descriptor entries, the caller's own keys). */
  function names(v: unknown, out: string[] = []): string[] {
    if (Array.isArray(v)) for (const x of v) names(x, out);
    else if (v !== null && typeof v === "object")
      for (const [k, x] of Object.entries(v)) {
        out.push(k);
        if (k !== "entries") names(x, out);
      }
    return out;
  }

  it("are proto3 JSON lowerCamelCase in every answer: /json, /v1/quota, /v1/reset and errors", async () => {
    const app = await start();
    const bodies: unknown[] = [];
    for (let i = 0; i < 6; i++) bodies.push(await (await hit(app, "acme_corp")).json());
    bodies.push((await quota(app, "domain=edge&descriptor=tenant=acme_corp&descriptor=x_y=z")).body);
    bodies.push((await quota(app, "domain=edge")).body);
    bodies.push(
      await (await reset(app, "domain=edge&descriptor=tenant=acme_corp", `Bearer ${TOKEN}`)).json(),
    );
    bodies.push(await (await reset(app, "domain=edge&descriptor=tenant=acme_corp")).json());
    const all = names(bodies);
    expect(all).toContain("resetSeconds");
    expect(all).toContain("requestsPerUnit");
    expect(all.filter((n) => !/^[a-z][a-zA-Z0-9]*$/.test(n))).toEqual([]);
  });
});
