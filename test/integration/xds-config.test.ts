/**
 * Config over xDS: tollgate's ADS client against an in-test management server built from the
 * official Envoy discovery protos. Pushes, updates, removals and invalid configs go through the
 * same validation and swap as files; ACK/NACK, reconnection and TLS as envoyproxy/ratelimit's
 * GRPC_XDS_SOTW provider.
 */
import { rm } from "node:fs/promises";
import { join } from "node:path";
import * as grpc from "@grpc/grpc-js";
import { pino } from "pino";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { type App, startApp } from "../../src/app.js";
import { RateLimitUnit } from "../../src/gen/ratelimit/config/ratelimit/v3/rls_conf_pb.js";
import { AdsClient, type AdsEvent } from "../../src/protocol/xds/ads-client.js";
import { loadSettings } from "../../src/settings.js";
import { makeTestCerts, type TestCerts } from "../helpers/test-certs.js";
import { type RateLimitConfigInit, startXdsServer, type XdsServer } from "../helpers/xds-server.js";

const edge = (perMinute: number, unit = RateLimitUnit.MINUTE): RateLimitConfigInit => ({
  name: "edge-config",
  domain: "edge",
  descriptors: [{ key: "tenant", rateLimit: { unit, requestsPerUnit: perMinute } }],
});

let server: XdsServer | undefined;
let app: App | undefined;
afterEach(async () => {
  await app?.shutdown();
  app = undefined;
  await server?.close();
  server = undefined;
});

function start(port: number, extra: readonly string[] = []): Promise<App> {
  const settings = loadSettings(
    [
      ...["--xds-server", `127.0.0.1:${port}`, "--xds-node-id", "rl-test", "--xds-node-metadata", "zone=a"],
      ...["--xds-backoff-initial", "50ms", "--xds-backoff-max", "200ms"],
      ...["--grpc-addr", "127.0.0.1:0", "--http-addr", "127.0.0.1:0", "--compat", "envoyproxy"],
      ...extra,
    ],
    {},
  );
  return startApp(settings, pino({ level: "silent" }));
}

/** A server and an app started on its first push, `v1`: 2 a minute per tenant of domain edge. */
async function serverAndApp(): Promise<{ s: XdsServer; a: App }> {
  const s = await startXdsServer();
  server = s;
  const starting = start(s.port);
  await s.request(() => true);
  s.push("v1", [edge(2)]);
  const a = await starting;
  app = a;
  return { s, a };
}

/** The overall code of one hit for `tenant` over HTTP /json. */
async function hit(a: App, tenant: string): Promise<string> {
  const res = await fetch(`http://127.0.0.1:${a.httpAddress.port}/json`, {
    method: "POST",
    body: JSON.stringify({ domain: "edge", descriptors: [{ entries: [{ key: "tenant", value: tenant }] }] }),
  });
  return ((await res.json()) as { overallCode: string }).overallCode;
}

async function codes(a: App, tenant: string, n: number): Promise<string[]> {
  const out: string[] = [];
  for (let i = 0; i < n; i++) out.push(await hit(a, tenant));
  return out;
}

describe("config over xDS (state of the world)", () => {
  it("subscribes as its node, serves the pushed config, ACKs, applies updates and removals", async () => {
    const s = await startXdsServer();
    server = s;
    const starting = start(s.port);
    const hello = await s.request((r) => r.type_url !== "");
    expect(hello).toMatchObject({
      version_info: "",
      response_nonce: "",
      type_url: "type.googleapis.com/ratelimit.config.ratelimit.v3.RateLimitConfig",
      error_detail: null,
    });
    expect(hello.node?.id).toBe("rl-test");
    expect(hello.node?.metadata?.fields.zone?.stringValue).toBe("a");

    const n1 = s.push("v1", [edge(2)]);
    app = await starting;
    await s.request((r) => r.response_nonce === n1);
    expect(s.requests.at(-1)).toMatchObject({ version_info: "v1", response_nonce: n1, error_detail: null });
    expect(await codes(app, "acme", 3)).toEqual(["OK", "OK", "OVER_LIMIT"]);

    const n2 = s.push("v2", [edge(4)]);
    const ack2 = await s.request((r) => r.response_nonce === n2);
    expect(ack2.version_info).toBe("v2");
    expect(await codes(app, "globex", 5)).toEqual(["OK", "OK", "OK", "OK", "OVER_LIMIT"]);

    const n3 = s.push("v3", []);
    expect((await s.request((r) => r.response_nonce === n3)).version_info).toBe("v3");
    expect(app.rules().domains.size).toBe(0);
    expect(await codes(app, "initech", 5)).toEqual(["OK", "OK", "OK", "OK", "OK"]);
  });

  it("NACKs an invalid push with every problem and keeps serving the last good config", async () => {
    const { s, a } = await serverAndApp();
    const bad: RateLimitConfigInit[] = [
      {
        name: "edge-config",
        domain: "edge",
        descriptors: [{ key: "tenant", rateLimit: { requestsPerUnit: 5 } }],
      },
      { name: "other", domain: "edge", descriptors: [] },
    ];
    const n2 = s.push("v2", bad);
    const nack = await s.request((r) => r.response_nonce === n2);
    expect(nack.version_info).toBe("v1");
    expect(nack.error_detail?.code).toBe(grpc.status.INVALID_ARGUMENT);
    expect(nack.error_detail?.message.split("\n")).toEqual([
      'xds:edge-config: descriptors[0].rate_limit: missing required key "unit" (or set unlimited: true)',
      'xds:other: domain: duplicate domain "edge" (first defined in xds:edge-config:1)',
    ]);
    expect(await codes(a, "acme", 3)).toEqual(["OK", "OK", "OVER_LIMIT"]);
    expect(a.lastReload()).toMatchObject({ ok: false });

    const n3 = s.push("v3", {
      raw: [{ type_url: "type.googleapis.com/google.protobuf.Empty", value: Buffer.alloc(0) }],
    });
    const refused = await s.request((r) => r.response_nonce === n3);
    expect(refused.version_info).toBe("v1");
    expect(refused.error_detail?.message).toBe(
      'resources[0] has type "type.googleapis.com/google.protobuf.Empty", expected type.googleapis.com/ratelimit.config.ratelimit.v3.RateLimitConfig',
    );
    const n4 = s.push("v4", [edge(1)]);
    expect((await s.request((r) => r.response_nonce === n4)).error_detail).toBeNull();
    expect(await codes(a, "globex", 2)).toEqual(["OK", "OVER_LIMIT"]);
  });

  it("waits for a first push that validates, NACKing the ones before it", async () => {
    const s = await startXdsServer();
    server = s;
    let started = false;
    const starting = start(s.port).then((a) => {
      started = true;
      return a;
    });
    await s.request(() => true);
    const n1 = s.push("v1", [{ name: "x", domain: "", descriptors: [] }]);
    const nack = await s.request((r) => r.response_nonce === n1);
    expect(nack.error_detail?.message).toBe("xds:x: domain: must not be empty");
    expect(nack.version_info).toBe("");
    expect(started).toBe(false);
    s.push("v2", [edge(2)]);
    app = await starting;
    expect(await codes(app, "acme", 3)).toEqual(["OK", "OK", "OVER_LIMIT"]);
  });

  it("with --xds-force-start serves no limits until the first push arrives", async () => {
    const s = await startXdsServer();
    server = s;
    app = await start(s.port, ["--xds-force-start"]);
    expect(await codes(app, "acme", 3)).toEqual(["OK", "OK", "OK"]);
    const n1 = s.push("v1", [edge(1)]);
    await s.request((r) => r.response_nonce === n1);
    expect(await codes(app, "globex", 2)).toEqual(["OK", "OVER_LIMIT"]);
  });

  it("reconnects after the stream ends, asking with the version it applied, and takes later pushes", async () => {
    const { s, a } = await serverAndApp();
    await s.request((r) => r.version_info === "v1");
    s.endStreams(grpc.status.UNAVAILABLE);
    const again = await s.request((r) => r.stream === 2);
    expect(again).toMatchObject({ version_info: "v1", response_nonce: "", error_detail: null });
    expect(await codes(a, "acme", 3)).toEqual(["OK", "OK", "OVER_LIMIT"]);
    const n2 = s.push("v2", [edge(3)]);
    await s.request((r) => r.response_nonce === n2);
    expect(await codes(a, "globex", 4)).toEqual(["OK", "OK", "OK", "OVER_LIMIT"]);
  });

  it("keeps trying while the server is down, and subscribes once it is up", async () => {
    const first = await startXdsServer();
    const port = first.port;
    await first.close();
    const starting = start(port);
    await new Promise((r) => setTimeout(r, 300));
    // A new server on the same port: the client's backoff loop finds it.
    const s = await startXdsServer({ port });
    server = s;
    await s.request(() => true);
    s.push("v1", [edge(2)]);
    app = await starting;
    expect(app.rules().domains.has("edge")).toBe(true);
  });
});

describe("config over xDS with TLS", () => {
  let certs: TestCerts;
  beforeAll(async () => {
    certs = await makeTestCerts();
  });
  afterAll(async () => {
    await rm(certs.dir, { recursive: true, force: true });
  });
  const pem = (name: string) => {
    const b = certs.pem[name];
    if (b === undefined) throw new Error(`no ${name}`);
    return b;
  };

  it("verifies the server against --xds-tls-ca and presents the client certificate (mTLS)", async () => {
    const s = await startXdsServer({
      tls: { ca: pem("ca.crt"), cert: pem("server.crt"), key: pem("server.key"), requireClientCert: true },
    });
    server = s;
    const tls = [
      "--xds-tls",
      ...["--xds-tls-ca", join(certs.dir, "ca.crt"), "--xds-tls-server-name", "localhost"],
      ...["--xds-tls-cert", join(certs.dir, "client.crt"), "--xds-tls-key", join(certs.dir, "client.key")],
    ];
    const starting = start(s.port, tls);
    await s.request(() => true);
    s.push("v1", [edge(2)]);
    app = await starting;
    expect(await codes(app, "acme", 3)).toEqual(["OK", "OK", "OVER_LIMIT"]);
  });

  it("does not subscribe to a server whose certificate its CA did not sign, and keeps retrying", async () => {
    const s = await startXdsServer({
      tls: { ca: pem("ca.crt"), cert: pem("server.crt"), key: pem("server.key"), requireClientCert: false },
    });
    server = s;
    const events: AdsEvent[] = [];
    const client = new AdsClient({
      target: { host: "127.0.0.1", port: s.port, headers: {}, tls: { serverName: "localhost" } },
      nodeId: "n",
      nodeMetadata: {},
      backoff: { initialMs: 20, maxMs: 40, jitter: 0 },
      onPush: () => {},
      onEvent: (e) => events.push(e),
    });
    client.start();
    await new Promise((r) => setTimeout(r, 500));
    client.close();
    expect(s.requests).toEqual([]);
    const ended = events.filter((e) => e.kind === "disconnected");
    expect(ended.length).toBeGreaterThanOrEqual(3);
    expect(ended[0]).toMatchObject({
      error: expect.stringMatching(/self[- ]signed|unable to verify|certificate/i),
    });
  });
});
