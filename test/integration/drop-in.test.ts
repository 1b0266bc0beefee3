/**
 * The drop-in container: the Istio sample's envoyproxy/ratelimit Deployment (its environment, its
 * ConfigMap mounted at $RUNTIME_ROOT/ratelimit/config, command /bin/ratelimit) run against tollgate's
 * /bin/ratelimit (docker/ratelimit). A temp dir stands in for /data and a private redis-server for
 * the sample's `redis` Service.
 */
import { execFile } from "node:child_process";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeConfigMap } from "../config/watch-fixture.js";
import { ISTIO_SAMPLE_CONFIG, ISTIO_SAMPLE_ENV, ISTIO_SAMPLE_PORTS } from "../helpers/istio-sample.js";
import { createRlsClient } from "../helpers/official-client.js";
import { freePort, type RedisServer, startRedis } from "../helpers/redis.js";
import { CLI, type Service, startService } from "../helpers/service.js";

const ENTRY = resolve(import.meta.dirname, "../../docker/ratelimit");
const DIST = resolve(import.meta.dirname, "../../dist");

let dir: string;
let redis: RedisServer;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "tollgate-dropin-"));
  redis = await startRedis();
});
afterAll(async () => {
  await redis?.stop();
  await rm(dir, { recursive: true, force: true });
});

/** The sample's environment as the container sees it, plus what a test must override. */
const containerEnv = (extra: Record<string, string>): NodeJS.ProcessEnv => ({
  PATH: process.env.PATH,
  ...ISTIO_SAMPLE_ENV,
  ...extra,
});

describe("tollgate as envoyproxy/ratelimit's image in the Istio sample's Deployment", () => {
  it("resolves the sample's environment to the reference's ports, config directory and Redis", async () => {
    // The entry point execs `node $TOLLGATE_CLI serve`; a probe in its place prints the settings.
    const probe = join(dir, "probe.mjs");
    await writeFile(
      probe,
      `import { resolveSettings } from ${JSON.stringify(join(DIST, "settings.js"))};
const { settings } = resolveSettings(process.argv.slice(3), process.env);
console.log(JSON.stringify(settings));`,
    );
    const { stdout } = await promisify(execFile)("sh", [ENTRY], {
      env: containerEnv({ TOLLGATE_CLI: probe }),
    });
    const s = JSON.parse(stdout) as Record<string, unknown>;
    expect(s.httpAddr).toEqual({ host: "::", port: ISTIO_SAMPLE_PORTS.http });
    expect(s.grpcAddr).toEqual({ host: "::", port: ISTIO_SAMPLE_PORTS.grpc });
    expect(s.debugAddr).toBe(`0.0.0.0:${ISTIO_SAMPLE_PORTS.debug}`);
    expect(s.config).toBe("/data/ratelimit/config");
    expect(s.store).toBe("redis://redis:6379");
    expect([s.compat, s.defaultAlgorithm, s.responseHeaders, s.logLevel]).toEqual([
      "envoyproxy",
      "fixed_window",
      "off",
      "debug",
    ]);
  });

  describe("serving", () => {
    let svc: Service;
    const ports = { http: 0, grpc: 0, debug: 0 };
    beforeAll(async () => {
      await mkdir(join(dir, "ratelimit", "config"), { recursive: true });
      await makeConfigMap(join(dir, "ratelimit", "config"), { "config.yaml": ISTIO_SAMPLE_CONFIG });
      for (const k of ["http", "grpc", "debug"] as const) ports[k] = await freePort();
      const env = containerEnv({
        RUNTIME_ROOT: dir,
        REDIS_URL: `127.0.0.1:${redis.port}`,
        // The sample's defaults (8080, 8081, 6070) may be taken on a shared test machine.
        PORT: String(ports.http),
        GRPC_PORT: String(ports.grpc),
        DEBUG_PORT: String(ports.debug),
        TOLLGATE_CLI: CLI,
      });
      svc = await startService({ config: "", exec: { file: "sh", args: [ENTRY], env } });
    });
    afterAll(async () => {
      await svc?.stop();
    });

    it("listens on the ports the environment names and logs what it read", () => {
      const ready = svc.output
        .map((l) => JSON.parse(l) as Record<string, unknown>)
        .find((l) => l.msg === "tollgate ready");
      expect(ready).toMatchObject({
        grpc: `:::${ports.grpc}`,
        http: `:::${ports.http}`,
        debug: `0.0.0.0:${ports.debug}`,
        store: `redis://127.0.0.1:${redis.port}`,
      });
      const read = svc.output
        .map((l) => JSON.parse(l) as { msg: string; mapped?: string[]; ignored?: string[] })
        .find((l) => l.msg === "envoyproxy/ratelimit environment read");
      expect(read?.mapped).toContain(`REDIS_URL+REDIS_SOCKET_TYPE → --store redis://127.0.0.1:${redis.port}`);
      expect(read?.mapped).toContain(
        `RUNTIME_ROOT+RUNTIME_SUBDIRECTORY → --config ${join(dir, "ratelimit", "config")}`,
      );
      expect(read?.ignored?.map((l) => l.split(":")[0])).toEqual([
        "USE_STATSD",
        "RUNTIME_WATCH_ROOT",
        "RUNTIME_IGNOREDOTFILES",
      ]);
    });

    it("answers the ConfigMap's descriptors as the reference does: fixed windows, no headers", async () => {
      const client = createRlsClient(`127.0.0.1:${ports.grpc}`);
      try {
        const ask = (path: string) =>
          client.shouldRateLimit({
            domain: "echo-ratelimit",
            descriptors: [{ entries: [{ key: "PATH", value: path }] }],
          });
        const first = await ask("/");
        expect(first.overall_code).toBe("OK");
        expect(first.statuses[0]).toMatchObject({
          code: "OK",
          current_limit: { requests_per_unit: 1, unit: "MINUTE" },
          limit_remaining: 0,
        });
        expect(first.statuses[0]?.duration_until_reset?.seconds).toBeLessThanOrEqual(60);
        expect(first.response_headers_to_add).toEqual([]);
        expect((await ask("/")).overall_code).toBe("OVER_LIMIT");
        const other = await ask("/productpage");
        expect(other.statuses[0]).toMatchObject({ code: "OK", limit_remaining: 99 });
      } finally {
        client.close();
      }
      const keys = await redis.client().keys("*echo-ratelimit*");
      expect(keys.length).toBe(2);
    });

    it("serves /rlconfig on the debug port and /healthcheck on the HTTP port", async () => {
      const rlconfig = await (await fetch(`http://127.0.0.1:${ports.debug}/rlconfig`)).text();
      expect(rlconfig).toContain("echo-ratelimit.PATH_/: 1/minute fixed_window");
      expect(rlconfig).toContain("echo-ratelimit.PATH: 100/minute fixed_window");
      expect((await fetch(`http://127.0.0.1:${ports.http}/healthcheck`)).status).toBe(200);
      expect(
        (await fetch(`http://127.0.0.1:${ports.debug}/json`, { method: "POST", body: "{}" })).status,
      ).toBe(404);
    });
  });
});
