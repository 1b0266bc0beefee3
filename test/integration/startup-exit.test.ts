/**
 * `tollgate serve` that cannot start exits non-zero on its own, promptly, with one line naming the
 * step, instead of half-running (a gRPC port answering while the HTTP port is taken) or hanging
 * (a Redis connection keeping the process alive). The built CLI runs as a child process.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort, type RedisServer, startRedis } from "../helpers/redis.js";
import { CLI } from "../helpers/service.js";

const CONFIG =
  "domain: edge\ndescriptors:\n  - key: tenant\n    rate_limit: { unit: minute, requests_per_unit: 5 }\n";

function occupy(port: number): Promise<Server> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(port, "127.0.0.1", () => resolve(s));
  });
}

/** Run `serve` to its exit (killed after 15 s): exit code, wall time and every output line. */
function serve(args: readonly string[]): Promise<{ code: number | null; ms: number; lines: string[] }> {
  const started = performance.now();
  const proc = spawn(process.execPath, [CLI, "serve", ...args], {
    env: { ...process.env, TOLLGATE_LOG_LEVEL: "info" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  proc.stdout.on("data", (c: Buffer) => {
    out += c.toString();
  });
  proc.stderr.on("data", (c: Buffer) => {
    out += c.toString();
  });
  const killer = setTimeout(() => proc.kill("SIGKILL"), 15_000);
  return new Promise((resolve) => {
    proc.once("exit", (code) => {
      clearTimeout(killer);
      resolve({ code, ms: performance.now() - started, lines: out.split("\n").filter((l) => l !== "") });
    });
  });
}

describe("tollgate serve that cannot start", () => {
  let redis: RedisServer;
  let config: string;
  beforeAll(async () => {
    redis = await startRedis();
    config = mkdtempSync(join(tmpdir(), "tollgate-exit-"));
    writeFileSync(join(config, "edge.yaml"), CONFIG);
  });
  afterAll(async () => {
    await redis?.stop();
  });

  for (const store of ["memory", "redis"] as const) {
    for (const taken of ["http", "grpc"] as const) {
      it(`exits 1 by itself within seconds with one line naming the step when the ${taken} port is taken (${store} store)`, async () => {
        const port = await freePort();
        const holder = await occupy(port);
        try {
          const other = taken === "http" ? "--grpc-addr" : "--http-addr";
          const run = await serve([
            "--config",
            config,
            "--store",
            store === "memory" ? "memory" : redis.url,
            `--${taken}-addr`,
            `127.0.0.1:${port}`,
            other,
            "127.0.0.1:0",
          ]);
          expect(run.code).toBe(1);
          // Well before the 3 s fail-safe of src/cli.ts: nothing was left open to keep it alive.
          expect(run.ms).toBeLessThan(8_000);
          expect(run.lines.some((l) => l.includes("still running"))).toBe(false);
          const failed = run.lines.filter((l) => l.includes('"level":50'));
          expect(failed).toHaveLength(1);
          const line = JSON.parse(failed[0] ?? "{}") as { step: string; msg: string };
          expect(line.step).toBe(`${taken} listen`);
          expect(line.msg).toMatch(
            new RegExp(`failed to start at step "${taken} listen": .*EADDRINUSE.*; not starting`),
          );
          expect(run.lines.some((l) => l.includes("tollgate ready"))).toBe(false);
        } finally {
          holder.close();
        }
      });
    }
  }
});
