/**
 * startApp as named steps (src/app.ts): each step that can fail (config source, config, store, TLS
 * files, HTTP bind, gRPC bind, debug bind) rejects with a StartupError naming it after closing what
 * the earlier steps opened, and shutdown closes the same steps in reverse. In-process against a
 * private redis-server and an in-test xDS server, so what was left open is observable: Redis
 * connections, listening ports, xDS streams.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { StartupError, startApp } from "../src/app.js";
import { ConfigError } from "../src/config/errors.js";
import { loadSettings } from "../src/settings.js";
import { recordLogs } from "./helpers/logs.js";
import { freePort, type RedisServer, startRedis } from "./helpers/redis.js";
import { startXdsServer } from "./helpers/xds-server.js";

const CONFIG =
  "domain: edge\ndescriptors:\n  - key: tenant\n    rate_limit: { unit: minute, requests_per_unit: 5 }\n";

function configDir(text = CONFIG): string {
  const dir = mkdtempSync(join(tmpdir(), "tollgate-steps-"));
  writeFileSync(join(dir, "edge.yaml"), text);
  return dir;
}

/** A listener holding `port` so that binding it fails with EADDRINUSE. */
function occupy(port: number): Promise<Server> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(port, "127.0.0.1", () => resolve(s));
  });
}

/** Whether `port` can be bound now (a closed server released it). */
async function bindable(port: number): Promise<boolean> {
  try {
    const s = await occupy(port);
    await new Promise<void>((r) => s.close(() => r()));
    return true;
  } catch {
    return false;
  }
}

describe("startApp steps", () => {
  let redis: RedisServer;
  let config: string;
  beforeAll(async () => {
    redis = await startRedis();
    config = configDir();
  });
  afterAll(async () => {
    await redis?.stop();
  });

  /** Connections to the test's redis-server other than the admin client asking. */
  async function tollgateConnections(): Promise<number> {
    const admin = redis.client();
    try {
      const list = String(await admin.call("CLIENT", "LIST"));
      return list.split("\n").filter((l) => l.trim() !== "").length - 1;
    } finally {
      admin.disconnect();
    }
  }
  async function noConnectionsLeft(): Promise<number> {
    let n = await tollgateConnections();
    for (let i = 0; i < 40 && n > 0; i++) {
      await new Promise((r) => setTimeout(r, 50));
      n = await tollgateConnections();
    }
    return n;
  }

  const settingsFor = (args: readonly string[]) =>
    loadSettings(
      [
        "--config",
        config,
        "--store",
        redis.url,
        "--grpc-addr",
        "127.0.0.1:0",
        "--http-addr",
        "127.0.0.1:0",
        ...args,
      ],
      {},
    );

  async function failedStep(args: readonly string[]): Promise<StartupError> {
    const { logger } = recordLogs("debug");
    const err = await startApp(settingsFor(args), logger).then(
      (app) => {
        void app.shutdown();
        throw new Error("expected startApp to fail");
      },
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(StartupError);
    return err as StartupError;
  }

  it("config source: an xDS client that cannot be built fails the first step, before anything is opened", async () => {
    const err = await failedStep([
      ...["--xds-server", "127.0.0.1:1", "--xds-tls", "--xds-tls-ca", "/nonexistent/xds-ca.pem"],
    ]);
    expect(err.step).toBe("config source");
    expect(err.message).toContain("/nonexistent/xds-ca.pem");
    expect(await noConnectionsLeft()).toBe(0);
  });

  it("config source: a later step that fails closes the xDS stream, and no new one is opened", async () => {
    const xds = await startXdsServer();
    const port = await freePort();
    const holder = await occupy(port);
    try {
      const err = await failedStep([
        ...["--xds-server", `127.0.0.1:${xds.port}`, "--xds-force-start"],
        ...["--xds-backoff-initial", "20ms", "--xds-backoff-max", "40ms"],
        ...["--http-addr", `127.0.0.1:${port}`],
      ]);
      expect(err.step).toBe("http listen");
      expect(xds.streams()).toBe(1);
      for (let i = 0; i < 40 && xds.openStreams() > 0; i++) await new Promise((r) => setTimeout(r, 50));
      expect(xds.openStreams()).toBe(0);
      await new Promise((r) => setTimeout(r, 300)); // several backoff intervals: a live client would be back
      expect(xds.streams()).toBe(1);
      expect(await noConnectionsLeft()).toBe(0);
    } finally {
      holder.close();
      await xds.close();
    }
  });

  it("config: a bad config fails the first step, before anything is opened", async () => {
    const bad = configDir(
      "domain: edge\ndescriptors:\n  - key: tenant\n    rate_limit: { unit: fortnight }\n",
    );
    const err = await failedStep(["--config", bad]);
    expect(err.step).toBe("config");
    expect(err.cause).toBeInstanceOf(ConfigError);
    expect(await noConnectionsLeft()).toBe(0);
  });

  it("store: a store that cannot be built fails its step", async () => {
    const err = await failedStep([
      "--store",
      `rediss://127.0.0.1:${redis.port}`,
      "--redis-tls-ca-file",
      "/nonexistent/ca.pem",
    ]);
    expect(err.step).toBe("store");
    expect(err.message).toContain("/nonexistent/ca.pem");
    expect(await noConnectionsLeft()).toBe(0);
  });

  it("tls files: a missing certificate fails its step and the store opened before it is closed", async () => {
    const err = await failedStep([
      "--tls-cert",
      "/nonexistent/cert.pem",
      "--tls-key",
      "/nonexistent/key.pem",
    ]);
    expect(err.step).toBe("tls files");
    expect(err.message).toContain("/nonexistent/cert.pem");
    expect(await noConnectionsLeft()).toBe(0);
  });

  it("http listen: a taken HTTP port fails its step and the store is closed", async () => {
    const port = await freePort();
    const holder = await occupy(port);
    try {
      const err = await failedStep(["--http-addr", `127.0.0.1:${port}`]);
      expect(err.step).toBe("http listen");
      expect(err.message).toContain("EADDRINUSE");
      expect(await noConnectionsLeft()).toBe(0);
    } finally {
      holder.close();
    }
  });

  it("grpc listen: a taken gRPC port fails its step, the HTTP port is released and the store closed", async () => {
    const [grpcPort, httpPort] = [await freePort(), await freePort()];
    const holder = await occupy(grpcPort);
    try {
      const err = await failedStep([
        "--grpc-addr",
        `127.0.0.1:${grpcPort}`,
        "--http-addr",
        `127.0.0.1:${httpPort}`,
      ]);
      expect(err.step).toBe("grpc listen");
      expect(err.message).toContain("EADDRINUSE");
      expect(await bindable(httpPort)).toBe(true);
      expect(await noConnectionsLeft()).toBe(0);
    } finally {
      holder.close();
    }
  });

  it("debug listen: a taken debug port fails its step; the gRPC and HTTP ports are released and the store closed", async () => {
    const [debugPort, grpcPort, httpPort] = [await freePort(), await freePort(), await freePort()];
    const holder = await occupy(debugPort);
    try {
      const err = await failedStep([
        ...["--debug-addr", `127.0.0.1:${debugPort}`],
        ...["--grpc-addr", `127.0.0.1:${grpcPort}`, "--http-addr", `127.0.0.1:${httpPort}`],
      ]);
      expect(err.step).toBe("debug listen");
      expect(err.message).toContain("EADDRINUSE");
      expect(await bindable(grpcPort)).toBe(true);
      expect(await bindable(httpPort)).toBe(true);
      expect(await noConnectionsLeft()).toBe(0);
    } finally {
      holder.close();
    }
  });

  it("tenant overrides: an override hash that cannot be read fails its step and closes the store", async () => {
    const admin = redis.client();
    await admin.set("tl:v1:{tenant-tiers}", "not a hash");
    admin.disconnect();
    try {
      const err = await failedStep([]);
      expect(err.step).toBe("tenant overrides");
      expect(err.message).toContain("WRONGTYPE");
      expect(await noConnectionsLeft()).toBe(0);
    } finally {
      const cleanup = redis.client();
      await cleanup.del("tl:v1:{tenant-tiers}");
      cleanup.disconnect();
    }
  });

  it("shutdown closes the steps in reverse order: watcher, debug, gRPC, HTTP, tenant overrides, store, config source", async () => {
    const { logs, logger } = recordLogs("debug");
    const app = await startApp(settingsFor(["--debug-addr", "127.0.0.1:0"]), logger);
    expect(await tollgateConnections()).toBeGreaterThan(0);
    const debugPort = app.debugAddress?.port ?? 0;
    expect(debugPort).toBeGreaterThan(0);
    await app.shutdown();
    expect(logs.filter((l) => l.msg === "closed at shutdown").map((l) => l.step)).toEqual([
      "config watcher",
      "debug listen",
      "grpc listen",
      "http listen",
      "tenant overrides",
      "store",
      "config source",
    ]);
    expect(await bindable(app.httpAddress.port)).toBe(true);
    expect(await bindable(app.grpcAddress.port)).toBe(true);
    expect(await bindable(debugPort)).toBe(true);
    expect(await noConnectionsLeft()).toBe(0);
  });

  it("shutdown with xDS ends the xDS stream before the servers drain", async () => {
    const xds = await startXdsServer();
    try {
      const { logs, logger } = recordLogs("debug");
      const app = await startApp(
        settingsFor(["--xds-server", `127.0.0.1:${xds.port}`, "--xds-force-start"]),
        logger,
      );
      expect(xds.openStreams()).toBe(1);
      await app.shutdown();
      const closed = logs.filter((l) => l.msg === "closed at shutdown").map((l) => l.step);
      expect(closed[0]).toBe("config watcher");
      for (let i = 0; i < 40 && xds.openStreams() > 0; i++) await new Promise((r) => setTimeout(r, 50));
      expect(xds.openStreams()).toBe(0);
      expect(await noConnectionsLeft()).toBe(0);
    } finally {
      await xds.close();
    }
  });
});
