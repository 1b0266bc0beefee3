import { mkdtempSync, writeFileSync } from "node:fs";
import { connect } from "node:http2";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  RateLimitRequestSchema,
  RateLimitResponse_Code,
  RateLimitResponseSchema,
} from "../../src/gen/envoy/service/ratelimit/v3/rls_pb.js";
import { runCli, type Service, startService } from "../helpers/service.js";

const CONFIG = `
domain: edge
descriptors:
  - key: tenant
    rate_limit: { unit: minute, requests_per_unit: 2, name: per_tenant }
`;

function configDir(text = CONFIG): string {
  const dir = mkdtempSync(join(tmpdir(), "tollgate-it-"));
  writeFileSync(join(dir, "edge.yaml"), text);
  return dir;
}

const body = (tenant: string) =>
  JSON.stringify({ domain: "edge", descriptors: [{ entries: [{ key: "tenant", value: tenant }] }] });

describe("the service over HTTP", () => {
  let svc: Service;
  beforeAll(async () => {
    svc = await startService({ config: configDir() });
  });
  afterAll(async () => {
    await svc?.stop();
  });

  it("answers /healthcheck with 200 OK while serving", async () => {
    const res = await svc.http("/healthcheck");
    expect(res.status).toBe(200);
    expect(await res.text()).toBe("OK\n");
  });

  it("decides POST /json: 200 within the limit, 429 over it, with proto3-JSON bodies", async () => {
    const ok = await svc.http("/json", { method: "POST", body: body("acme") });
    expect(ok.status).toBe(200);
    const okJson = (await ok.json()) as { overallCode: string; statuses: { limitRemaining: number }[] };
    expect(okJson.overallCode).toBe("OK");
    expect(okJson.statuses[0]?.limitRemaining).toBe(1);
    await svc.http("/json", { method: "POST", body: body("acme") });
    const over = await svc.http("/json", { method: "POST", body: body("acme") });
    expect(over.status).toBe(429);
    const overJson = (await over.json()) as { overallCode: string; responseHeadersToAdd: { key: string }[] };
    expect(overJson.overallCode).toBe("OVER_LIMIT");
    expect(overJson.responseHeadersToAdd.map((h) => h.key)).toContain("Retry-After");
  });

  it("answers 400 with a one-line reason for bad JSON and invalid input", async () => {
    const garbage = await svc.http("/json", { method: "POST", body: "{not json" });
    expect(garbage.status).toBe(400);
    const text = await garbage.text();
    expect(text).toMatch(/^invalid RateLimitRequest JSON: /);
    expect(text.trim().split("\n")).toHaveLength(1);
    const empty = await svc.http("/json", {
      method: "POST",
      body: JSON.stringify({ domain: "", descriptors: [] }),
    });
    expect(empty.status).toBe(400);
    expect(await empty.text()).toBe("domain is empty\n");
    const unknownField = await svc.http("/json", {
      method: "POST",
      body: JSON.stringify({ domian: "edge" }),
    });
    expect(unknownField.status).toBe(400);
  });

  it("lists the loaded rules on /rlconfig, one normalized line each", async () => {
    const text = await (await svc.http("/rlconfig")).text();
    expect(text).toContain("edge.tenant: 2/minute gcra name=per_tenant");
  });

  it("exposes Prometheus metrics with the decisions made", async () => {
    const text = await (await svc.http("/metrics")).text();
    expect(text).toMatch(
      /tollgate_decisions_total\{domain="edge",rule="edge.tenant",result="over_limit"\} 1/,
    );
  });

  it("counts gRPC calls and /json requests refused for bad input in the rejected-requests metric", async () => {
    const rejected = async () => {
      const text = await (await svc.http("/metrics")).text();
      return Number(/tollgate_rejected_requests_total\{reason="invalid_argument"\} (\d+)/.exec(text)?.[1]);
    };
    const before = await rejected();
    const session = connect(`http://${svc.grpcAddress}`);
    const msg = toBinary(RateLimitRequestSchema, create(RateLimitRequestSchema, { domain: "" }));
    const frame = Buffer.alloc(5 + msg.length);
    frame.writeUInt32BE(msg.length, 1);
    frame.set(msg, 5);
    const status = await new Promise<unknown>((resolve) => {
      const s = session.request({
        ":method": "POST",
        ":path": "/envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit",
        "content-type": "application/grpc",
      });
      s.on("response", (h) => resolve(h["grpc-status"]));
      s.on("data", () => {});
      s.end(frame);
    });
    session.close();
    expect(status).toBe("3");
    expect(await rejected()).toBe(before + 1);
    const bad = await svc.http("/json", { method: "POST", body: '{"domain":"edge","descriptors":[]}' });
    expect(bad.status).toBe(400);
    expect(await rejected()).toBe(before + 2);
    const text = await (await svc.http("/metrics")).text();
    expect(text).toMatch(/tollgate_in_flight_requests 0/);
  });

  it("answers garbage, deeply nested and oversized JSON with 400/413 and keeps serving", async () => {
    let seed = 7;
    const rand = () => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    const bodies = [
      "[".repeat(100_000),
      `${'{"domain":'.repeat(50_000)}1`,
      JSON.stringify({
        domain: "edge",
        descriptors: [{ entries: [{ key: "tenant", value: { deep: [[[[1]]]] } }] }],
      }),
      JSON.stringify({ domain: "edge", descriptors: Array.from({ length: 1000 }, () => ({ entries: [] })) }),
      "\u0000\uffff",
      ...Array.from({ length: 200 }, () =>
        Buffer.from(
          Array.from({ length: 1 + Math.floor(rand() * 300) }, () => Math.floor(rand() * 256)),
        ).toString("latin1"),
      ),
    ];
    for (const b of bodies) {
      const res = await svc.http("/json", { method: "POST", body: b });
      expect(res.status).toBe(400);
      const text = await res.text();
      expect(text.trim().split("\n")).toHaveLength(1);
    }
    const huge = await svc.http("/json", { method: "POST", body: "x".repeat(5 * 1024 * 1024) });
    expect(huge.status).toBe(413);
    expect((await svc.http("/healthcheck")).status).toBe(200);
    expect((await svc.http("/json", { method: "POST", body: body("after-fuzz") })).status).toBe(200);
  });

  it("answers 404 for unknown paths and 405 for a wrong method", async () => {
    expect((await svc.http("/nope")).status).toBe(404);
    expect((await svc.http("/json")).status).toBe(405);
  });
});

describe("the service lifecycle", () => {
  it("refuses to start on an invalid config, naming file, line and YAML path", async () => {
    const dir = configDir(
      "domain: edge\ndescriptors:\n  - key: tenant\n    rate_limit: { unit: fortnight, requests_per_unit: 1 }\n",
    );
    await expect(startService({ config: dir })).rejects.toThrow(
      /edge\.yaml:4:\d+: descriptors\[0\]\.rate_limit\.unit/,
    );
  });

  it("drains on SIGTERM: an in-flight gRPC call completes, health stops serving, exit code 0", async () => {
    const svc = await startService({ config: configDir() });
    const session = connect(`http://${svc.grpcAddress}`);
    const stream = session.request({
      ":method": "POST",
      ":path": "/envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit",
      "content-type": "application/grpc",
      te: "trailers",
    });
    const msg = toBinary(
      RateLimitRequestSchema,
      create(RateLimitRequestSchema, {
        domain: "edge",
        descriptors: [{ entries: [{ key: "tenant", value: "t" }] }],
      }),
    );
    const frame = Buffer.alloc(5 + msg.length);
    frame.writeUInt32BE(msg.length, 1);
    frame.set(msg, 5);
    const chunks: Buffer[] = [];
    let trailers: Record<string, unknown> = {};
    stream.on("data", (c: Buffer) => chunks.push(c));
    stream.on("trailers", (t) => {
      trailers = t;
    });
    const ended = new Promise<void>((resolve) => stream.on("close", () => resolve()));
    stream.write(frame.subarray(0, 3)); // half a frame: the call is in flight
    await new Promise((r) => setTimeout(r, 100));
    svc.proc.kill("SIGTERM");
    await new Promise((r) => setTimeout(r, 200));
    expect((await svc.http("/healthcheck").catch(() => undefined))?.status ?? 500).toBe(500);
    stream.end(frame.subarray(3));
    await ended;
    session.close();
    expect(trailers["grpc-status"]).toBe("0");
    const res = fromBinary(RateLimitResponseSchema, Buffer.concat(chunks).subarray(5));
    expect(res.overallCode).toBe(RateLimitResponse_Code.OK);
    expect(await svc.exited).toBe(0);
  });
});

describe("the offline commands", () => {
  it("check prints the normalized rules and exits 0 for a valid config", async () => {
    const r = await runCli(["check", configDir()]);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe("edge.tenant: 2/minute gcra name=per_tenant\n");
  });

  it("check prints every problem with file:line:column and exits 1", async () => {
    const dir = configDir(
      "domain: edge\ndescriptors:\n  - key: ''\n    rate_limit: { unit: minute, requests_per_unit: -1 }\n",
    );
    const r = await runCli(["check", dir]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/edge\.yaml:3:\d+: descriptors\[0\]\.key/);
    expect(r.stderr).toMatch(/edge\.yaml:4:\d+: descriptors\[0\]\.rate_limit\.requests_per_unit/);
  });

  it("explain shows the matched rule, its limits and bucket key", async () => {
    const r = await runCli([
      "explain",
      "--config",
      configDir(),
      "--domain",
      "edge",
      "--descriptor",
      "tenant=acme",
    ]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("rule: edge.tenant");
    expect(r.stdout).toContain("limit 0: 2/minute burst 2 gcra name=per_tenant");
    expect(r.stdout).toContain("key: tl:v1:{edge|tenant=acme}:g0");
  });
});

describe("check on a config using every section", () => {
  it("accepts ext_authz and tiers sections and reports their problems with positions", async () => {
    const ok = `domain: edge
descriptors:
  - key: ip
    rate_limit: { unit: second, requests_per_unit: 10 }
tiers:
  default_tier: free
  tiers:
    - name: free
      limits:
        - rate_limit: { unit: minute, requests_per_unit: 2 }
`;
    const good = await runCli(["check", configDir(ok)]);
    expect(good.stderr).toContain("ok");
    expect(good.code).toBe(0);
    const bad = await runCli(["check", configDir(ok.replace("default_tier: free", "default_tier: gold"))]);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/edge\.yaml:\d+:\d+: tiers/);
  });
});
